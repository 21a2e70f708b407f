#include "envs/humanoid.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include <mujoco/mujoco.h>

#include "envs/humanoid_v5_model.hpp"
#include "envs/uniform.hpp"

namespace fiber::rl {

namespace {

// The name the built-in model has in MuJoCo's virtual file system, and in the model cache.
constexpr const char* kBuiltInV5File = "humanoid_v5.xml";
constexpr int kLoadErrorLength = 1024;

std::string resolve_xml_path(const Humanoid::Options& options) {
  if (!options.xml_path.empty()) return options.xml_path;
  if (options.model == Humanoid::Model::gymnasium_v5) return "";
  const char* variable = std::getenv(Humanoid::kXmlVariable);
  if (variable != nullptr && *variable != '\0') return variable;
  return Humanoid::kMujocoXml;
}

[[noreturn]] void fail_to_load(const std::string& path, const std::string& why) {
  std::string message = "fiber::rl::Humanoid: cannot load the MuJoCo model '" + path + "' (" + why +
                        "); install the Debian package libmujoco-samples, or set " +
                        Humanoid::kXmlVariable + " to a humanoid.xml";
  std::replace(message.begin(), message.end(), '\n', ' ');
  throw std::runtime_error(message);
}

mjModel* load_built_in_v5() {
  const char* text = humanoid_v5_xml();
  const auto vfs = std::make_unique<mjVFS>();  // large (file table): not on the stack
  mj_defaultVFS(vfs.get());
  const int size = static_cast<int>(std::strlen(text));
  if (mj_makeEmptyFileVFS(vfs.get(), kBuiltInV5File, size) != 0) {
    throw std::runtime_error("fiber::rl::Humanoid: cannot hold the built-in Humanoid-v5 model");
  }
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), kBuiltInV5File)], text,
              static_cast<std::size_t>(size));
  char error[kLoadErrorLength] = "";
  mjModel* model = mj_loadXML(kBuiltInV5File, vfs.get(), error, sizeof error);
  mj_deleteVFS(vfs.get());
  if (model == nullptr) {
    throw std::runtime_error(std::string("fiber::rl::Humanoid: the built-in Humanoid-v5 model ") +
                             "does not load: " + error);
  }
  return model;
}

mjModel* load_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail_to_load(path, "no such file");
  char error[kLoadErrorLength] = "";
  mjModel* model = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (model == nullptr) fail_to_load(path, error[0] != '\0' ? error : "mj_loadXML failed");
  return model;
}

// One mjModel per file and process: mj_loadXML is slow, and a model is read-only once loaded.
// Environments hold a shared_ptr, so the cache's destruction at exit frees nothing in use.
// `path` empty: the built-in Humanoid-v5 model.
std::shared_ptr<const mjModel> load_model(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const mjModel>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = cache.find(path); found != cache.end()) return found->second;

  mjModel* model = path.empty() ? load_built_in_v5() : load_file(path);
  std::shared_ptr<const mjModel> shared(
      model, [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
  if (model->njnt < 1 || model->jnt_type[0] != mjJNT_FREE || model->nu < 1) {
    fail_to_load(path, "not a humanoid: its first joint must be a free joint, and it needs motors");
  }
  cache.emplace(path, shared);
  return shared;
}

struct DataDeleter {
  void operator()(mjData* data) const { mj_deleteData(data); }
};

}  // namespace

struct Humanoid::Impl {
  Model model_kind = Model::gymnasium_v5;
  std::string path;
  bool full_observation = true;
  std::shared_ptr<const mjModel> model;
  std::unique_ptr<mjData, DataDeleter> data;
  ActionSpace action_space;
  int observation_size = 0;
  RewardTerms last_terms;
  // Held between steps: the next step's reward and a restored state start from them.
  double mass_center_x = 0.0;
  Eigen::VectorXd last_observation;

  const mjModel* m() const { return model.get(); }
  mjData* d() const { return data.get(); }
  bool v5() const { return model_kind == Model::gymnasium_v5; }

  // x of the center of mass, from xipos (as Gymnasium's mass_center).
  double compute_mass_center_x() const {
    double weighted = 0.0;
    double total = 0.0;
    for (int b = 0; b < m()->nbody; ++b) {
      weighted += m()->body_mass[b] * d()->xipos[3 * static_cast<std::ptrdiff_t>(b)];
      total += m()->body_mass[b];
    }
    return weighted / total;
  }

  bool healthy() const {
    const double z = d()->qpos[2];
    return kHealthyZMin < z && z < kHealthyZMax;
  }

  // Gymnasium's contact_cost: over every body's cfrc_ext, the world's included.
  double contact_cost() const {
    double sum = 0.0;
    for (int i = 0; i < 6 * m()->nbody; ++i) sum += d()->cfrc_ext[i] * d()->cfrc_ext[i];
    return std::min(kContactCostWeight * sum, kContactCostMax);
  }

  Eigen::VectorXd observation() const {
    const int nq = m()->nq;
    const int nv = m()->nv;
    const int nb = m()->nbody - 1;  // without the world body
    Eigen::VectorXd obs(observation_size);
    int at = 0;
    auto append = [&](const mjtNum* values, int count) {
      for (int i = 0; i < count; ++i) obs(at++) = values[i];
    };
    append(d()->qpos + 2, nq - 2);
    append(d()->qvel, nv);
    if (full_observation) {
      append(d()->cinert + 10, 10 * nb);
      append(d()->cvel + 6, 6 * nb);
      append(d()->qfrc_actuator + 6, nv - 6);
      append(d()->cfrc_ext + 6, 6 * nb);
    }
    return obs;
  }

  // The parts of state(), in order, as (pointer, count); the two held values come after them.
  std::vector<std::pair<mjtNum*, int>> state_parts() const {
    return {{&d()->time, 1},
            {d()->qpos, m()->nq},
            {d()->qvel, m()->nv},
            {d()->act, m()->na},
            {d()->qacc_warmstart, m()->nv}};
  }
};

Humanoid::Humanoid() : Humanoid(Options{}) {}

Humanoid::Humanoid(const Options& options) : impl_(std::make_unique<Impl>()) {
  impl_->model_kind = options.model;
  impl_->path = resolve_xml_path(options);
  impl_->full_observation = options.full_observation;
  impl_->model = load_model(impl_->path);
  const mjModel* m = impl_->m();
  impl_->data.reset(mj_makeData(m));
  if (!impl_->data) throw std::runtime_error("fiber::rl::Humanoid: mj_makeData failed");

  std::vector<double> low(static_cast<std::size_t>(m->nu));
  std::vector<double> high(low.size());
  for (int i = 0; i < m->nu; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const bool limited = m->actuator_ctrllimited[i] != 0;
    low[k] = limited ? m->actuator_ctrlrange[2 * k] : -std::numeric_limits<double>::infinity();
    high[k] = limited ? m->actuator_ctrlrange[2 * k + 1] : std::numeric_limits<double>::infinity();
  }
  impl_->action_space = ActionSpace::box(std::move(low), std::move(high));

  const int nb = m->nbody - 1;
  impl_->observation_size = m->nq - 2 + m->nv;
  if (impl_->full_observation) impl_->observation_size += 10 * nb + 6 * nb + (m->nv - 6) + 6 * nb;
}

Humanoid::~Humanoid() = default;

std::string Humanoid::name() const { return impl_->v5() ? kV5Name : kMujocoModelName; }
int Humanoid::observation_size() const { return impl_->observation_size; }
const ActionSpace& Humanoid::action_space() const { return impl_->action_space; }
const std::string& Humanoid::xml_path() const { return impl_->path; }
double Humanoid::torso_height() const { return impl_->d()->qpos[2]; }
double Humanoid::x_position() const { return impl_->d()->qpos[0]; }
const Humanoid::RewardTerms& Humanoid::last_reward_terms() const { return impl_->last_terms; }
double Humanoid::dt() const { return impl_->m()->opt.timestep * kFrameSkip; }

int Humanoid::state_size() const {
  int size = 1;  // the center of mass's x
  for (const auto& [values, count] : impl_->state_parts()) size += count;
  return size + impl_->observation_size;
}

std::vector<double> Humanoid::state() const {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(state_size()));
  for (const auto& [values, count] : impl_->state_parts())
    out.insert(out.end(), values, values + count);
  out.push_back(impl_->mass_center_x);
  const Eigen::VectorXd& obs = impl_->last_observation;
  out.insert(out.end(), obs.data(), obs.data() + obs.size());
  return out;
}

Eigen::VectorXd Humanoid::set_state(const std::vector<double>& state) {
  if (static_cast<int>(state.size()) != state_size()) {
    throw std::invalid_argument("fiber::rl::Humanoid: a state of " + std::to_string(state.size()) +
                                " values for " + name() + ", whose state has " +
                                std::to_string(state_size()));
  }
  const double* from = state.data();
  for (const auto& [values, count] : impl_->state_parts()) {
    std::copy(from, from + count, values);
    from += count;
  }
  impl_->mass_center_x = *from++;
  impl_->last_observation = Eigen::Map<const Eigen::VectorXd>(from, impl_->observation_size);
  impl_->last_terms = RewardTerms{};
  start_episode();
  return impl_->last_observation;
}

Eigen::VectorXd Humanoid::do_reset(std::uint64_t seed) {
  const mjModel* m = impl_->m();
  mjData* d = impl_->d();
  mj_resetData(m, d);
  UniformRng rng(seed);
  for (int i = 0; i < m->nq; ++i) {
    d->qpos[i] = m->qpos0[i] + rng.uniform(-kResetNoiseScale, kResetNoiseScale);
  }
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = rng.uniform(-kResetNoiseScale, kResetNoiseScale);
  mj_forward(m, d);
  if (!impl_->v5()) mj_rnePostConstraint(m, d);  // v5 (Gymnasium) leaves cfrc_ext at zero
  impl_->last_terms = RewardTerms{};
  impl_->mass_center_x = impl_->compute_mass_center_x();
  impl_->last_observation = impl_->observation();
  return impl_->last_observation;
}

StepResult Humanoid::do_step(const Eigen::VectorXd& action) {
  const mjModel* m = impl_->m();
  mjData* d = impl_->d();
  // v5 as Gymnasium: the controls are the action as given (MuJoCo clamps them in the dynamics).
  const Eigen::VectorXd ctrl = impl_->v5() ? action : clip_to_action_space(action);

  const double x_before = impl_->mass_center_x;
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] = ctrl(i);
  for (int i = 0; i < kFrameSkip; ++i) mj_step(m, d);
  mj_rnePostConstraint(m, d);
  impl_->mass_center_x = impl_->compute_mass_center_x();

  RewardTerms& terms = impl_->last_terms;
  terms.x_velocity = (impl_->mass_center_x - x_before) / dt();
  terms.forward = kForwardRewardWeight * terms.x_velocity;
  const bool healthy = impl_->healthy();
  terms.healthy = healthy ? kHealthyReward : 0.0;
  terms.ctrl_cost = kCtrlCostWeight * ctrl.squaredNorm();
  terms.contact_cost = impl_->v5() ? impl_->contact_cost() : 0.0;

  StepResult result;
  result.reward = terms.forward + terms.healthy - (terms.ctrl_cost + terms.contact_cost);
  result.terminated = !healthy;
  impl_->last_observation = impl_->observation();
  result.observation = impl_->last_observation;
  return result;
}

}  // namespace fiber::rl
