// Boost.Serialization for dense Eigen matrices and vectors (Eigen::VectorXd, Eigen::MatrixXd,
// fixed-size ones too), so that they can be members of serialized structs and fiber task
// arguments and results.
//
// Format: rows and columns as std::int64_t, then the coefficients in Eigen's storage order
// (column-major unless the type says RowMajor) as one array (a single block in binary archives).
// Loading into a fixed-size type checks that the stored shape matches.
#pragma once

#include <cstdint>
#include <stdexcept>

#include <Eigen/Core>
#include <boost/serialization/array_wrapper.hpp>
#include <boost/serialization/split_free.hpp>

namespace boost::serialization {

template <class Archive, class Scalar, int Rows, int Cols, int Options, int MaxRows, int MaxCols>
void save(Archive& archive, const Eigen::Matrix<Scalar, Rows, Cols, Options, MaxRows, MaxCols>& m,
          const unsigned int /*version*/) {
  const std::int64_t rows = m.rows();
  const std::int64_t cols = m.cols();
  archive << rows << cols;
  if (m.size() > 0) archive << make_array(m.data(), static_cast<std::size_t>(m.size()));
}

template <class Archive, class Scalar, int Rows, int Cols, int Options, int MaxRows, int MaxCols>
void load(Archive& archive, Eigen::Matrix<Scalar, Rows, Cols, Options, MaxRows, MaxCols>& m,
          const unsigned int /*version*/) {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  archive >> rows >> cols;
  if (rows < 0 || cols < 0 || (Rows != Eigen::Dynamic && rows != Rows) ||
      (Cols != Eigen::Dynamic && cols != Cols)) {
    throw std::runtime_error("Eigen deserialization: stored shape does not fit the matrix type");
  }
  m.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  if (m.size() > 0) archive >> make_array(m.data(), static_cast<std::size_t>(m.size()));
}

template <class Archive, class Scalar, int Rows, int Cols, int Options, int MaxRows, int MaxCols>
void serialize(Archive& archive, Eigen::Matrix<Scalar, Rows, Cols, Options, MaxRows, MaxCols>& m,
               const unsigned int version) {
  split_free(archive, m, version);
}

}  // namespace boost::serialization
