// Stream sockets for the queue broker and the Pipes' direct connections: TCP (a listener on every
// interface at a port the system picks; connections with TCP_NODELAY, as their messages are small
// and each is waited for), and Unix-domain sockets in Linux's abstract namespace for processes on
// one host (no file to remove; about half TCP loopback's latency, docs/platform.md).
#pragma once

#include <cstdint>
#include <string>

#include "posix/unique_fd.hpp"

namespace fiber::posix {

// A listening socket; its port in `port`. Throws fiber::Error naming `who` if it cannot.
UniqueFd listen_tcp(std::uint16_t& port, const std::string& who);
// A connection to host:port; an empty UniqueFd and the reason in `why` if there is none.
UniqueFd connect_tcp(const std::string& host, std::uint16_t port, std::string& why);

// A listening Unix-domain socket named `name` (abstract: nothing on the file system).
UniqueFd listen_local(const std::string& name, const std::string& who);
// A connection to the local socket `name`; empty (and `why`) if there is none.
UniqueFd connect_local(const std::string& name, std::string& why);

// Sends each small write at once (an accepted connection; connect_tcp's already do).
void no_delay(int socket);

}  // namespace fiber::posix
