// Rank-based fitness shaping, as OpenAI-ES's compute_ranks / compute_centered_ranks (es.py).
//
// ranks(x)[i] is the position of x[i] in x sorted ascending, in [0, n-1]. Ties are broken by
// index (a stable sort: of equal values the earlier one gets the lower rank), which is what
// numpy's x.argsort() gives for small arrays and what argsort(kind="stable") always gives. NaNs
// rank above every number, as numpy sorts them last.
//
// centered_ranks(x) = ranks(x) / (n - 1) - 0.5, in [-0.5, 0.5], summing to 0. For n = 1 the result
// is 0 (numpy would give NaN from 0 / 0).
#pragma once

#include <Eigen/Core>

namespace fiber::rl {

// Ranks in [0, n-1] as doubles (see the file comment for ties).
Eigen::VectorXd ranks(const Eigen::VectorXd& x);

// ranks(x) / (n - 1) - 0.5.
Eigen::VectorXd centered_ranks(const Eigen::VectorXd& x);

// compute_centered_ranks on a matrix, as OpenAI-ES does on its (n x 2) returns of antithetic
// pairs (column 0: return with +noise, column 1: with -noise): the matrix is flattened in numpy's
// ravel() (row-major) order, ranked over all n*2 entries, divided by (size - 1), shifted by 0.5
// and reshaped back. Works for any shape; the row-major flattening only matters for ties.
Eigen::MatrixXd centered_ranks_matrix(const Eigen::MatrixXd& returns);

// For an (n x 2) matrix of processed antithetic returns, the ES weights of the n noise vectors:
// column 0 - column 1 (OpenAI-ES: proc_returns_n2[:, 0] - proc_returns_n2[:, 1]). Throws
// std::invalid_argument unless there are exactly 2 columns.
Eigen::VectorXd antithetic_weights(const Eigen::MatrixXd& processed_returns_n2);

}  // namespace fiber::rl
