// Writes a small run log for the plot_script test (and for trying scripts/plot.py by hand):
//   rl_storage_make_log OUT.h5 [ROWS]      an ES-like learning curve, ROWS generations (default 30)
//   rl_storage_make_log --checkpoint OUT.h5  a checkpoint instead (an HDF5 file that is no run log)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "storage/checkpoint.hpp"
#include "storage/run_log.hpp"

int main(int argc, char** argv) {
  using fiber::rl::RunLog;
  try {
    if (argc == 3 && std::string(argv[1]) == "--checkpoint") {
      fiber::rl::CheckpointWriter writer;
      writer.put("generation", 3);
      writer.put("theta", std::vector<double>{0.1, 0.2});
      writer.commit(argv[2]);
      return 0;
    }
    if (argc < 2 || argc > 3) {
      std::cerr << "usage: rl_storage_make_log OUT.h5 [ROWS] | --checkpoint OUT.h5\n";
      return 2;
    }
    const int rows = argc == 3 ? std::stoi(argv[2]) : 30;
    RunLog log = RunLog::create(argv[1],
                                {{"generation", RunLog::Type::int64},
                                 {"timesteps", RunLog::Type::int64},
                                 {"seconds", RunLog::Type::float64},
                                 {"return_mean", RunLog::Type::float64},
                                 {"return_min", RunLog::Type::float64},
                                 {"return_max", RunLog::Type::float64},
                                 {"eval_return", RunLog::Type::float64}},
                                RunLog::IfExists::overwrite);
    log.set_meta("environment", "Pendulum");
    log.set_meta("algorithm", "ES");
    log.set_meta("config", "population = 64\nsigma = 0.02\n");
    for (int g = 0; g < rows; ++g) {
      const double mean = -1500.0 + 1300.0 * (1.0 - std::exp(-g / 8.0));
      log.append({g, std::int64_t{g} * 64 * 200, 1.5 * g, mean, mean - 200.0 - 5.0 * g,
                  mean + 150.0, mean + 40.0});
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "rl_storage_make_log: " << error.what() << "\n";
    return 1;
  }
}
