#include "policy/mlp.hpp"

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace fiber::rl {

namespace {

std::string shape(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

}  // namespace

Mlp::Mlp(std::vector<Eigen::Index> layer_sizes) : sizes_(std::move(layer_sizes)) {
  if (sizes_.size() < 2) {
    throw std::invalid_argument("Mlp: needs at least two layer sizes (inputs and outputs), got " +
                                std::to_string(sizes_.size()));
  }
  for (std::size_t i = 0; i < sizes_.size(); ++i) {
    if (sizes_[i] <= 0) {
      throw std::invalid_argument("Mlp: layer size " + std::to_string(i) + " is " +
                                  std::to_string(sizes_[i]) + "; sizes must be positive");
    }
  }
  build_layout();
}

Mlp::Mlp(std::vector<Eigen::Index> layer_sizes, std::uint64_t seed, Initializer initializer)
    : Mlp(std::move(layer_sizes)) {
  initialize(seed, initializer);
}

void Mlp::build_layout() {
  layouts_.clear();
  Eigen::Index offset = 0;
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    LayerLayout layer;
    layer.inputs = sizes_[l];
    layer.outputs = sizes_[l + 1];
    layer.weight_offset = offset;
    layer.bias_offset = offset + layer.inputs * layer.outputs;
    offset = layer.bias_offset + layer.outputs;
    layouts_.push_back(layer);
  }
  parameters_ = Eigen::VectorXd::Zero(offset);
}

void Mlp::rebuild_after_load() {
  Eigen::VectorXd loaded = std::move(parameters_);
  if (sizes_.empty()) {
    layouts_.clear();
    parameters_.resize(0);
    if (loaded.size() != 0) throw std::invalid_argument("Mlp: loaded parameters without layers");
    return;
  }
  *this = Mlp(std::move(sizes_));  // validates the sizes
  set_parameters(loaded);
}

void Mlp::initialize(std::uint64_t seed, Initializer initializer) {
  std::mt19937_64 rng(seed);
  for (std::size_t l = 0; l < layouts_.size(); ++l) {
    auto w = weights(l);
    const bool output_layer = l + 1 == layouts_.size();
    switch (initializer) {
      case Initializer::kNormc: {
        std::normal_distribution<double> normal(0.0, 1.0);
        // Storage order: column j (input j), then row i (output i), like numpy's randn(in, out).
        for (Eigen::Index k = 0; k < w.size(); ++k) w.data()[k] = normal(rng);
        const double target = output_layer ? 0.01 : 1.0;
        for (Eigen::Index i = 0; i < w.rows(); ++i) {
          const double norm = w.row(i).norm();
          if (norm > 0.0) w.row(i) *= target / norm;
        }
        break;
      }
      case Initializer::kXavier: {
        const double a = std::sqrt(6.0 / static_cast<double>(w.rows() + w.cols()));
        std::uniform_real_distribution<double> uniform(-a, a);
        for (Eigen::Index k = 0; k < w.size(); ++k) w.data()[k] = uniform(rng);
        break;
      }
      default:
        throw std::invalid_argument("Mlp::initialize: unknown initializer");
    }
    bias(l).setZero();
  }
}

Eigen::Index Mlp::input_size() const { return sizes_.empty() ? 0 : sizes_.front(); }

Eigen::Index Mlp::output_size() const { return sizes_.empty() ? 0 : sizes_.back(); }

void Mlp::set_parameters(const Eigen::VectorXd& parameters) {
  if (parameters.size() != parameters_.size()) {
    throw std::invalid_argument("Mlp::set_parameters: got " + std::to_string(parameters.size()) +
                                " values, the network has " + std::to_string(parameters_.size()) +
                                " parameters");
  }
  parameters_ = parameters;
}

const LayerLayout& Mlp::layout(std::size_t layer) const {
  if (layer >= layouts_.size()) {
    throw std::out_of_range("Mlp: layer " + std::to_string(layer) + " of " +
                            std::to_string(layouts_.size()));
  }
  return layouts_[layer];
}

Eigen::Map<Eigen::MatrixXd> Mlp::weights(std::size_t layer) {
  const LayerLayout& l = layout(layer);
  return {parameters_.data() + l.weight_offset, l.outputs, l.inputs};
}

Eigen::Map<const Eigen::MatrixXd> Mlp::weights(std::size_t layer) const {
  const LayerLayout& l = layout(layer);
  return {parameters_.data() + l.weight_offset, l.outputs, l.inputs};
}

Eigen::Map<Eigen::VectorXd> Mlp::bias(std::size_t layer) {
  const LayerLayout& l = layout(layer);
  return {parameters_.data() + l.bias_offset, l.outputs};
}

Eigen::Map<const Eigen::VectorXd> Mlp::bias(std::size_t layer) const {
  const LayerLayout& l = layout(layer);
  return {parameters_.data() + l.bias_offset, l.outputs};
}

Eigen::VectorXd Mlp::forward(const Eigen::VectorXd& input) const {
  if (layouts_.empty()) throw std::logic_error("Mlp::forward: the network has no layers");
  if (input.size() != input_size()) {
    throw std::invalid_argument("Mlp::forward: input has " + std::to_string(input.size()) +
                                " values, the network takes " + std::to_string(input_size()));
  }
  Eigen::VectorXd a = input;
  for (std::size_t l = 0; l < layouts_.size(); ++l) {
    Eigen::VectorXd z = weights(l) * a + bias(l);
    if (l + 1 < layouts_.size()) z = z.array().tanh();
    a = std::move(z);
  }
  return a;
}

Mlp::ForwardCache Mlp::forward_with_cache(const Eigen::MatrixXd& inputs_as_columns) const {
  if (layouts_.empty()) throw std::logic_error("Mlp::forward: the network has no layers");
  if (inputs_as_columns.rows() != input_size()) {
    throw std::invalid_argument(
        "Mlp::forward: inputs are " + shape(inputs_as_columns.rows(), inputs_as_columns.cols()) +
        ", the network takes " + std::to_string(input_size()) + " rows (one input per column)");
  }
  ForwardCache cache;
  cache.activations.reserve(layouts_.size());
  cache.activations.push_back(inputs_as_columns);
  for (std::size_t l = 0; l < layouts_.size(); ++l) {
    Eigen::MatrixXd z = weights(l) * cache.activations.back();
    z.colwise() += bias(l);
    if (l + 1 < layouts_.size()) {
      cache.activations.push_back(z.array().tanh().matrix());
    } else {
      cache.outputs = std::move(z);
    }
  }
  return cache;
}

Eigen::MatrixXd Mlp::forward(const Eigen::MatrixXd& inputs_as_columns) const {
  return forward_with_cache(inputs_as_columns).outputs;
}

Eigen::VectorXd Mlp::backward(const Eigen::MatrixXd& inputs_as_columns,
                              const Eigen::MatrixXd& output_gradients,
                              Eigen::MatrixXd* input_gradients) const {
  return backward(forward_with_cache(inputs_as_columns), output_gradients, input_gradients);
}

Eigen::VectorXd Mlp::backward(const ForwardCache& cache, const Eigen::MatrixXd& output_gradients,
                              Eigen::MatrixXd* input_gradients) const {
  if (layouts_.empty()) throw std::logic_error("Mlp::backward: the network has no layers");
  if (cache.activations.size() != layouts_.size() ||
      cache.activations.front().rows() != input_size()) {
    throw std::invalid_argument("Mlp::backward: the cache does not come from this network");
  }
  const Eigen::Index batch = cache.activations.front().cols();
  if (output_gradients.rows() != output_size() || output_gradients.cols() != batch) {
    throw std::invalid_argument("Mlp::backward: output gradients are " +
                                shape(output_gradients.rows(), output_gradients.cols()) +
                                ", expected " + shape(output_size(), batch));
  }
  Eigen::VectorXd gradient(parameters_.size());
  Eigen::MatrixXd delta = output_gradients;  // d loss / d z_l, outputs x batch
  for (std::size_t l = layouts_.size(); l-- > 0;) {
    const LayerLayout& layer = layouts_[l];
    const Eigen::MatrixXd& a = cache.activations[l];  // input of layer l
    Eigen::Map<Eigen::MatrixXd>(gradient.data() + layer.weight_offset, layer.outputs, layer.inputs)
        .noalias() = delta * a.transpose();
    Eigen::Map<Eigen::VectorXd>(gradient.data() + layer.bias_offset, layer.outputs) =
        delta.rowwise().sum();
    if (l > 0) {
      // a = tanh(z_{l-1}), so d a / d z_{l-1} = 1 - a^2.
      Eigen::MatrixXd upstream = weights(l).transpose() * delta;
      delta = upstream.array() * (1.0 - a.array().square());
    } else if (input_gradients != nullptr) {
      *input_gradients = weights(0).transpose() * delta;
    }
  }
  return gradient;
}

}  // namespace fiber::rl
