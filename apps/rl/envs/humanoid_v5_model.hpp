// Humanoid-v5's MuJoCo model, models/humanoid_v5.xml, compiled into the library (CMake writes it
// into humanoid_v5_model.cpp) so that every process finds it wherever it runs.
#pragma once

namespace fiber::rl {

// The MJCF text of models/humanoid_v5.xml.
const char* humanoid_v5_xml();

}  // namespace fiber::rl
