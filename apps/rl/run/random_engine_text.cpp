#include "run/random_engine_text.hpp"

#include <sstream>

namespace fiber::rl {

std::string engine_text(const std::mt19937_64& engine) {
  std::ostringstream text;
  text << engine;
  return text.str();
}

void set_engine(std::mt19937_64& engine, const std::string& text) {
  std::istringstream(text) >> engine;
}

}  // namespace fiber::rl
