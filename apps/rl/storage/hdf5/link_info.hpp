// The link information type of H5Literate and H5Lget_info, whose names moved in HDF5 1.12 (to
// H5Literate2, H5Lget_info2 and H5L_info2_t): the one both HDF5 versions the project builds
// against pass to its callbacks.
#pragma once

#include <H5Lpublic.h>
#include <H5public.h>

namespace fiber::rl::hdf5 {

#if H5_VERSION_GE(1, 12, 0)
using LinkInfo = H5L_info2_t;
#else
using LinkInfo = H5L_info_t;
#endif

}  // namespace fiber::rl::hdf5
