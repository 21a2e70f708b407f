// A multilayer perceptron whose parameters live in one flat vector.
//
// Architecture: layer sizes (n_0, n_1, ..., n_L) give L affine layers. Layer l maps n_l inputs to
// n_{l+1} outputs as z = W_l a + b_l; every layer but the last is followed by tanh, the last one
// is linear (its outputs are logits or action means, see policy/action.hpp).
//
// Flat parameter order (parameters()): for l = 0, 1, ..., L-1: first W_l, an n_{l+1} x n_l
// matrix stored column-major (Eigen's default; coefficient (i, j) at weight_offset + j * n_{l+1}
// + i), then b_l (n_{l+1} values). parameter_count() = sum_l (n_l + 1) * n_{l+1}. This is the
// order OpenAI-ES's get_trainable_flat produces for TensorFlow dense layers (kernel [in, out]
// row-major, then bias), so flat vectors and noise slices correspond one to one.
//
// weights(l) and bias(l) are Eigen::Map views into the flat vector: writing through them changes
// parameters(), and layout(l) gives the offsets. backward() computes the gradient with respect to
// the flat vector (same order) by backpropagation.
//
// Initialization (initialize(seed, ...)) draws from std::mt19937_64 seeded with `seed`; biases
// are zero. Initializer::kNormc is OpenAI-ES's normc_initializer: each W_l is filled with standard
// normal draws in storage order, then each row (the incoming weights of one output unit) is scaled
// to Euclidean norm `std`, with std = 1.0 for hidden layers and 0.01 for the output layer.
// Initializer::kXavier is Glorot-uniform: U(-a, a) with a = sqrt(6 / (n_in + n_out)).
//
// Not thread-safe for concurrent mutation; const methods may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <boost/serialization/vector.hpp>

#include "policy/eigen_serialization.hpp"

namespace fiber::rl {

enum class Initializer {
  kNormc,   // OpenAI-ES normc: rows of norm 1.0 (hidden layers) and 0.01 (output layer)
  kXavier,  // Glorot uniform, U(-sqrt(6 / (in + out)), +sqrt(6 / (in + out)))
};

// Where one affine layer lives in the flat parameter vector.
struct LayerLayout {
  Eigen::Index inputs = 0;         // n_l
  Eigen::Index outputs = 0;        // n_{l+1}
  Eigen::Index weight_offset = 0;  // first coefficient of W_l (column-major, outputs x inputs)
  Eigen::Index bias_offset = 0;    // first coefficient of b_l (= weight_offset + outputs * inputs)
};

namespace detail {
// Eigen types other than VectorXd and MatrixXd (for Mlp::forward's expression overload).
template <class T>
concept NotXdType = !std::is_same_v<T, Eigen::VectorXd> && !std::is_same_v<T, Eigen::MatrixXd>;
}  // namespace detail

class Mlp {
 public:
  // Everything a batched forward pass keeps for backward(): activations[0] is the input batch,
  // activations[l] (1 <= l < L) the tanh output of hidden layer l, and `outputs` the result.
  struct ForwardCache {
    std::vector<Eigen::MatrixXd> activations;
    Eigen::MatrixXd outputs;
  };

  // An empty network (no layers, no parameters); for deserialization.
  Mlp() = default;

  // layer_sizes = {inputs, hidden..., outputs}, at least two sizes, all positive; throws
  // std::invalid_argument otherwise. Parameters are all zero until initialize() or
  // set_parameters().
  explicit Mlp(std::vector<Eigen::Index> layer_sizes);

  // Same, then initialize(seed, initializer).
  Mlp(std::vector<Eigen::Index> layer_sizes, std::uint64_t seed,
      Initializer initializer = Initializer::kNormc);

  // Re-draws all parameters (see the file comment); deterministic in (sizes, seed, initializer).
  void initialize(std::uint64_t seed, Initializer initializer = Initializer::kNormc);

  const std::vector<Eigen::Index>& layer_sizes() const { return sizes_; }
  std::size_t layer_count() const { return layouts_.size(); }  // affine layers, L
  Eigen::Index input_size() const;
  Eigen::Index output_size() const;
  Eigen::Index parameter_count() const { return parameters_.size(); }

  // The flat parameter vector (order in the file comment).
  const Eigen::VectorXd& parameters() const { return parameters_; }
  // Copies `parameters` in; throws std::invalid_argument unless its size is parameter_count().
  void set_parameters(const Eigen::VectorXd& parameters);

  // Views of layer `layer` (0-based, < layer_count(); checked, std::out_of_range) into the flat
  // vector. The non-const ones write through to parameters().
  const LayerLayout& layout(std::size_t layer) const;
  Eigen::Map<Eigen::MatrixXd> weights(std::size_t layer);
  Eigen::Map<const Eigen::MatrixXd> weights(std::size_t layer) const;
  Eigen::Map<Eigen::VectorXd> bias(std::size_t layer);
  Eigen::Map<const Eigen::VectorXd> bias(std::size_t layer) const;

  // One input of size input_size() (checked, std::invalid_argument) -> output_size() values.
  Eigen::VectorXd forward(const Eigen::VectorXd& input) const;
  // A batch, one input per column (input_size() x N) -> output_size() x N.
  Eigen::MatrixXd forward(const Eigen::MatrixXd& inputs_as_columns) const;
  // Any other Eigen expression (fixed-size vectors, blocks, ...): a column-vector type goes to the
  // single-input forward, anything else to the batched one (the two overloads above would be
  // ambiguous for them).
  template <detail::NotXdType Derived>
  auto forward(const Eigen::MatrixBase<Derived>& x) const {
    if constexpr (Derived::ColsAtCompileTime == 1) {
      return forward(Eigen::VectorXd(x));
    } else {
      return forward(Eigen::MatrixXd(x));
    }
  }
  // The batched forward pass, keeping what backward() needs.
  ForwardCache forward_with_cache(const Eigen::MatrixXd& inputs_as_columns) const;

  // Backpropagation. For a scalar loss = sum over columns n of f_n(forward(inputs).col(n)) and
  // output_gradients.col(n) = d f_n / d output (output_size() x N), returns d loss / d parameters
  // (size parameter_count(), flat order). Averaging over the batch is the caller's business
  // (scale output_gradients by 1/N). If input_gradients is not null it receives d loss / d inputs
  // (input_size() x N). Shapes are checked (std::invalid_argument).
  Eigen::VectorXd backward(const Eigen::MatrixXd& inputs_as_columns,
                           const Eigen::MatrixXd& output_gradients,
                           Eigen::MatrixXd* input_gradients = nullptr) const;
  // Same from a cache of forward_with_cache() (saves recomputing the forward pass).
  Eigen::VectorXd backward(const ForwardCache& cache, const Eigen::MatrixXd& output_gradients,
                           Eigen::MatrixXd* input_gradients = nullptr) const;

  // Boost.Serialization: layer sizes and parameters (loading rebuilds the layout and checks it).
  template <class Archive>
  void serialize(Archive& archive, const unsigned int /*version*/) {
    archive& sizes_;
    archive& parameters_;
    if constexpr (Archive::is_loading::value) rebuild_after_load();
  }

 private:
  void build_layout();
  void rebuild_after_load();

  std::vector<Eigen::Index> sizes_;
  std::vector<LayerLayout> layouts_;
  Eigen::VectorXd parameters_;
};

}  // namespace fiber::rl
