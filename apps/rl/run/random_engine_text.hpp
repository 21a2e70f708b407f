// A random engine's state as text, the standard library's form, and back: how a run keeps it in
// its checkpoint and how fiber-ppo hands it to its learner and takes it back.
#pragma once

#include <random>
#include <string>

namespace fiber::rl {

std::string engine_text(const std::mt19937_64& engine);
// Sets `engine` to the state `text` holds (engine_text's).
void set_engine(std::mt19937_64& engine, const std::string& text);

}  // namespace fiber::rl
