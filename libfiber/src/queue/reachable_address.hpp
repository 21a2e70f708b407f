// The address by which other nodes reach this host's queue broker and Pipe readers: an IPv4
// address on the interface MPI's own TCP traffic uses, not the host name, which another node may
// not resolve (docs/platform.md, "Several nodes on one machine").
#pragma once

#include <string>

namespace fiber::detail {

// This host's address on the first interface Open MPI's settings select
// (OMPI_MCA_oob_tcp_if_include, else OMPI_MCA_btl_tcp_if_include: interface names or a.b.c.d/n
// subnets; else the first interface up that is neither loopback nor in an exclude list; loopback on
// a host with nothing else), as text. The host name if no interface has an IPv4 address. Computed
// once per process.
const std::string& reachable_address();

}  // namespace fiber::detail
