#include "envs/humanoid.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

#include <mujoco/mujoco.h>

#include "envs/uniform.hpp"

namespace fiber::rl {

namespace {

std::string resolve_xml_path(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  const char* variable = std::getenv(Humanoid::kXmlVariable);
  if (variable != nullptr && *variable != '\0') return variable;
  return Humanoid::kDefaultXml;
}

[[noreturn]] void fail_to_load(const std::string& path, const std::string& why) {
  std::string message = "fiber::rl::Humanoid: cannot load the MuJoCo model '" + path + "' (" + why +
                        "); install the Debian package libmujoco-samples, or set " +
                        Humanoid::kXmlVariable + " to a humanoid.xml";
  std::replace(message.begin(), message.end(), '\n', ' ');
  throw std::runtime_error(message);
}

// One mjModel per file and process: mj_loadXML is slow, and a model is read-only once loaded.
// Environments hold a shared_ptr, so the cache's destruction at exit frees nothing in use.
std::shared_ptr<const mjModel> load_model(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const mjModel>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = cache.find(path); found != cache.end()) return found->second;

  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail_to_load(path, "no such file");
  char error[1024] = "";
  mjModel* model = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (model == nullptr) fail_to_load(path, error[0] != '\0' ? error : "mj_loadXML failed");
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
  std::string path;
  bool full_observation = true;
  std::shared_ptr<const mjModel> model;
  std::unique_ptr<mjData, DataDeleter> data;
  ActionSpace action_space;
  int observation_size = 0;
  RewardTerms last_terms;

  const mjModel* m() const { return model.get(); }
  mjData* d() const { return data.get(); }

  // x of the center of mass, from xipos (as Gymnasium's mass_center).
  double mass_center_x() const {
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
};

Humanoid::Humanoid() : Humanoid(Options{}) {}

Humanoid::Humanoid(const Options& options) : impl_(std::make_unique<Impl>()) {
  impl_->path = resolve_xml_path(options.xml_path);
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

int Humanoid::observation_size() const { return impl_->observation_size; }
const ActionSpace& Humanoid::action_space() const { return impl_->action_space; }
const std::string& Humanoid::xml_path() const { return impl_->path; }
double Humanoid::torso_height() const { return impl_->d()->qpos[2]; }
double Humanoid::x_position() const { return impl_->d()->qpos[0]; }
const Humanoid::RewardTerms& Humanoid::last_reward_terms() const { return impl_->last_terms; }
double Humanoid::dt() const { return impl_->m()->opt.timestep * kFrameSkip; }

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
  mj_rnePostConstraint(m, d);  // cfrc_ext, which mj_forward leaves alone
  impl_->last_terms = RewardTerms{};
  return impl_->observation();
}

StepResult Humanoid::do_step(const Eigen::VectorXd& action) {
  const mjModel* m = impl_->m();
  mjData* d = impl_->d();
  const Eigen::VectorXd ctrl = clip_to_action_space(action);

  const double x_before = impl_->mass_center_x();
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] = ctrl(i);
  for (int i = 0; i < kFrameSkip; ++i) mj_step(m, d);
  mj_rnePostConstraint(m, d);
  const double x_after = impl_->mass_center_x();

  RewardTerms& terms = impl_->last_terms;
  terms.x_velocity = (x_after - x_before) / dt();
  terms.forward = kForwardRewardWeight * terms.x_velocity;
  const bool healthy = impl_->healthy();
  terms.healthy = healthy ? kHealthyReward : 0.0;
  terms.ctrl_cost = kCtrlCostWeight * ctrl.squaredNorm();

  StepResult result;
  result.reward = terms.forward + terms.healthy - terms.ctrl_cost;
  result.terminated = !healthy;
  result.observation = impl_->observation();
  return result;
}

}  // namespace fiber::rl
