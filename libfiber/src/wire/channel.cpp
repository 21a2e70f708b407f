#include "wire/channel.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "mpi/error.hpp"
#include "shm/lane_doorbell.hpp"
#include "wire/protocol_error.hpp"

namespace fiber::detail {

Channel::Channel(MPI_Comm comm, int peer)
    : comm_(comm), peer_(peer), eager_(sizeof(MessageHeader) + kEagerBytes) {}

Channel::~Channel() {
  if (sends_.empty()) return;
  static std::mutex abandoned_mutex;
  static auto* abandoned = new std::vector<PendingSend>();  // never freed, on purpose
  std::lock_guard lock(abandoned_mutex);
  for (auto& send : sends_) {
    PendingSend kept{mpi::Request(), std::move(send.buffer), std::move(send.keep_alive)};
    abandoned->push_back(std::move(kept));  // `send.request` is freed with sends_
  }
}

void Channel::fail(std::string why) {
  if (failure_) return;
  failure_ = std::move(why);
  failures_.fetch_add(1, std::memory_order_relaxed);
}

void Channel::post_receive(MPI_Request* request) {
  *request = MPI_REQUEST_NULL;
  if (failure_) return;
  int rc = MPI_SUCCESS;
  if (large_) {
    std::size_t piece = std::min(kPieceBytes, large_->body_size - large_received_);
    rc = MPI_Irecv(large_body_.data() + large_received_, static_cast<int>(piece), MPI_BYTE, peer_,
                   kBodyTag, comm_, request);
  } else {
    rc = MPI_Irecv(eager_.data(), static_cast<int>(eager_.size()), MPI_BYTE, peer_, kHeaderTag,
                   comm_, request);
  }
  if (rc != MPI_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    fail("MPI_Irecv failed: " + mpi::error_text(rc));
  }
}

std::optional<Message> Channel::on_received(const MPI_Status& status, MPI_Request* request) {
  int count = 0;
  mpi::check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  if (large_) {
    large_received_ += static_cast<std::size_t>(count);
    if (large_received_ < large_->body_size) {
      post_receive(request);
      return std::nullopt;
    }
    Message message{large_->kind, std::move(large_body_)};
    large_.reset();
    large_body_ = Bytes();
    large_received_ = 0;
    return message;
  }
  if (static_cast<std::size_t>(count) < sizeof(MessageHeader)) {
    throw ProtocolError("fiber: received a message without a header");
  }
  MessageHeader header;
  std::memcpy(&header, eager_.data(), sizeof header);
  if (header.body_follows) {
    large_ = header;
    large_body_.resize(header.body_size);
    large_received_ = 0;
    post_receive(request);
    return std::nullopt;
  }
  const char* body = eager_.data() + sizeof header;
  return Message{header.kind, Bytes(body, body + (count - sizeof header))};
}

void Channel::start_send(const char* data, std::size_t size, int tag,
                         std::shared_ptr<const Bytes> buffer,
                         std::shared_ptr<const void> keep_alive) {
  if (failure_) return;
  PendingSend pending{mpi::Request(), std::move(buffer), std::move(keep_alive)};
  int rc =
      MPI_Isend(data, static_cast<int>(size), MPI_BYTE, peer_, tag, comm_, pending.request.get());
  if (rc != MPI_SUCCESS) {
    fail("MPI_Isend failed: " + mpi::error_text(rc));
    return;
  }
  int done = 0;
  rc = MPI_Test(pending.request.get(), &done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) fail("a send failed: " + mpi::error_text(rc));
  if (!done) sends_.push_back(std::move(pending));
}

void Channel::send(MessageKind kind, std::initializer_list<std::span<const char>> parts,
                   std::shared_ptr<const void> keep_alive) {
  if (failure_) return;
  std::size_t body_size = 0;
  for (auto part : parts) body_size += part.size();
  MessageHeader header{kind, body_size > kEagerBytes ? 1u : 0u, body_size};

  // The header, and the body too when it is small: one MPI message.
  auto first = std::make_shared<Bytes>(sizeof header + (header.body_follows ? 0 : body_size));
  std::memcpy(first->data(), &header, sizeof header);
  if (!header.body_follows) {
    char* out = first->data() + sizeof header;
    for (auto part : parts) out = std::copy(part.begin(), part.end(), out);
    start_send(first->data(), first->size(), kHeaderTag, first, nullptr);
    ring_after_send();
    return;
  }
  start_send(first->data(), first->size(), kHeaderTag, first, nullptr);
  // A large body: every part but the last is copied into one message (they are small headers);
  // the last, the bulk, is sent in place and kept alive by `keep_alive`.
  auto prefix = std::make_shared<Bytes>();
  for (auto part = parts.begin(); part + 1 < parts.end(); ++part) {
    prefix->insert(prefix->end(), part->begin(), part->end());
  }
  if (!prefix->empty()) start_send(prefix->data(), prefix->size(), kBodyTag, prefix, nullptr);
  auto bulk = parts.size() > 0 ? *(parts.end() - 1) : std::span<const char>();
  if (!keep_alive) {  // nothing keeps the caller's memory alive: send a copy
    auto copy = std::make_shared<const Bytes>(bulk.begin(), bulk.end());
    bulk = *copy;
    keep_alive = copy;
  }
  for (std::size_t offset = 0; offset < bulk.size(); offset += kPieceBytes) {
    std::size_t piece = std::min(kPieceBytes, bulk.size() - offset);
    start_send(bulk.data() + offset, piece, kBodyTag, nullptr, keep_alive);
  }
  ring_after_send();
}

void Channel::ring_after_send() {
  if (!doorbell_ && !quiet_doorbell_) return;
  auto now = std::chrono::steady_clock::now();
  // (A lent worker sleeps on its lane's doorbell, rung after every send.)
  if (doorbell_) {
    doorbell_->ring();
  } else if (now - last_send_ >= kQuietBeforeRing) {
    quiet_doorbell_->ring();
  }
  last_send_ = now;
}

bool Channel::progress_sends() {
  while (!sends_.empty() && !failure_) {
    int done = 0;
    int rc = MPI_Test(sends_.front().request.get(), &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      fail("a send failed: " + mpi::error_text(rc));
      break;
    }
    if (!done) return false;
    sends_.pop_front();
  }
  return sends_.empty();
}

void Channel::wait_sends() {
  while (!sends_.empty() && !failure_) {
    int rc = MPI_Wait(sends_.front().request.get(), MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      fail("a send failed: " + mpi::error_text(rc));
      break;
    }
    sends_.pop_front();
  }
}

}  // namespace fiber::detail
