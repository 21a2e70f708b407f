// launch_defaults: the MPI settings set before MPI_Init and by fiberrun, never over the user's.
#include "launch_defaults.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace {

using fiber::detail::apply_launch_defaults;
using fiber::detail::oversubscription_allowed;
using fiber::detail::runs_locally;

// Every variable the defaults read or write: unset for each test, given back after it.
const char* const kVariables[] = {"OMPI_ALLOW_RUN_AS_ROOT",
                                  "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
                                  "OMPI_MCA_pml",
                                  "OMPI_MCA_pml_ucx_tls",
                                  "OMPI_MCA_pml_ucx_devices",
                                  "UCX_TLS",
                                  "UCX_LOG_FILE",
                                  "OMPI_MCA_mpi_yield_when_idle",
                                  "OMPI_MCA_orte_enable_recovery",
                                  "OMPI_MCA_orte_allowed_exit_without_sync",
                                  "OMPI_MCA_rmaps_base_oversubscribe",
                                  "OMPI_MCA_btl_tcp_if_include",
                                  "OMPI_MCA_btl_tcp_if_exclude",
                                  "OMPI_MCA_oob_tcp_if_include",
                                  "OMPI_MCA_oob_tcp_if_exclude",
                                  "OMPI_MCA_orte_default_hostfile",
                                  "FIBER_LOCAL",
                                  "FIBER_OVERSUBSCRIBE",
                                  "SLURM_JOB_ID",
                                  "PBS_JOBID",
                                  "LSB_JOBID",
                                  "FLUX_JOB_ID",
                                  "COBALT_JOBID"};

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

class LaunchDefaults : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      saved_[name] = env(name);
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST_F(LaunchDefaults, UseUcxWithoutCmaOnLoopbackLocally) {
  apply_launch_defaults();
  EXPECT_EQ(env("OMPI_MCA_pml"), "ucx");
  EXPECT_EQ(env("OMPI_MCA_pml_ucx_tls"), "any");
  EXPECT_EQ(env("OMPI_MCA_pml_ucx_devices"), "any");
  EXPECT_EQ(env("UCX_TLS"), "^cma");
  EXPECT_EQ(env("UCX_LOG_FILE"), "stderr");
  EXPECT_EQ(env("OMPI_MCA_mpi_yield_when_idle"), "1");
  EXPECT_EQ(env("OMPI_MCA_orte_enable_recovery"), "1");
  EXPECT_EQ(env("OMPI_MCA_orte_allowed_exit_without_sync"), "1");
  EXPECT_EQ(env("OMPI_MCA_rmaps_base_oversubscribe"), "1");
  EXPECT_EQ(env("OMPI_MCA_btl_tcp_if_include"), "lo");
  EXPECT_EQ(env("OMPI_MCA_oob_tcp_if_include"), "lo");
}

TEST_F(LaunchDefaults, AllowRootOnlyForRoot) {
  apply_launch_defaults();
  std::optional<std::string> expected =
      geteuid() == 0 ? std::optional<std::string>("1") : std::nullopt;
  EXPECT_EQ(env("OMPI_ALLOW_RUN_AS_ROOT"), expected);
  EXPECT_EQ(env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), expected);
}

TEST_F(LaunchDefaults, LeaveTheUsersUcxTransportsAndLogAlone) {
  setenv("UCX_TLS", "tcp,self", 1);
  setenv("UCX_LOG_FILE", "/tmp/ucx.log", 1);
  apply_launch_defaults();
  EXPECT_EQ(env("UCX_TLS"), "tcp,self");
  EXPECT_EQ(env("UCX_LOG_FILE"), "/tmp/ucx.log");
  EXPECT_EQ(env("OMPI_MCA_pml"), "ucx");
}

TEST_F(LaunchDefaults, LeaveAnotherPmlAndUcxAlone) {
  setenv("OMPI_MCA_pml", "ob1", 1);
  apply_launch_defaults();
  EXPECT_EQ(env("OMPI_MCA_pml"), "ob1");
  EXPECT_EQ(env("OMPI_MCA_pml_ucx_tls"), std::nullopt);
  EXPECT_EQ(env("UCX_TLS"), std::nullopt);
  EXPECT_EQ(env("UCX_LOG_FILE"), std::nullopt);
  EXPECT_EQ(env("OMPI_MCA_orte_enable_recovery"), "1");
}

TEST_F(LaunchDefaults, SetUcxSettingsWhenTheUserChoseUcx) {
  setenv("OMPI_MCA_pml", "ucx", 1);
  setenv("OMPI_MCA_mpi_yield_when_idle", "0", 1);
  apply_launch_defaults();
  EXPECT_EQ(env("OMPI_MCA_pml_ucx_tls"), "any");
  EXPECT_EQ(env("UCX_TLS"), "^cma");
  EXPECT_EQ(env("OMPI_MCA_mpi_yield_when_idle"), "0");
}

TEST_F(LaunchDefaults, ABatchSystemOrHostfileMeansNotLocal) {
  EXPECT_TRUE(runs_locally());
  for (const char* job : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID",
                          "OMPI_MCA_orte_default_hostfile"}) {
    setenv(job, "17", 1);
    EXPECT_FALSE(runs_locally()) << job;
    EXPECT_FALSE(oversubscription_allowed()) << job;
    unsetenv(job);
  }
}

TEST_F(LaunchDefaults, FiberLocalDecidesWhenSet) {
  setenv("SLURM_JOB_ID", "17", 1);
  setenv("FIBER_LOCAL", "1", 1);
  EXPECT_TRUE(runs_locally());
  unsetenv("SLURM_JOB_ID");
  setenv("FIBER_LOCAL", "0", 1);
  EXPECT_FALSE(runs_locally());
  setenv("FIBER_LOCAL", "", 1);  // empty: as if unset
  EXPECT_TRUE(runs_locally());
}

TEST_F(LaunchDefaults, OnAClusterTheSiteChoosesInterfacesAndSlots) {
  setenv("SLURM_JOB_ID", "17", 1);
  apply_launch_defaults();
  EXPECT_EQ(env("OMPI_MCA_btl_tcp_if_include"), std::nullopt);
  EXPECT_EQ(env("OMPI_MCA_oob_tcp_if_include"), std::nullopt);
  EXPECT_EQ(env("OMPI_MCA_rmaps_base_oversubscribe"), std::nullopt);
  EXPECT_EQ(env("OMPI_MCA_orte_enable_recovery"), "1");
}

TEST_F(LaunchDefaults, FiberOversubscribeDecidesWhenSet) {
  setenv("FIBER_OVERSUBSCRIBE", "0", 1);
  EXPECT_FALSE(oversubscription_allowed());
  apply_launch_defaults();
  EXPECT_EQ(env("OMPI_MCA_rmaps_base_oversubscribe"), std::nullopt);
  setenv("SLURM_JOB_ID", "17", 1);
  setenv("FIBER_OVERSUBSCRIBE", "1", 1);
  EXPECT_TRUE(oversubscription_allowed());
}

TEST_F(LaunchDefaults, AnExcludedInterfaceListKeepsTheIncludeListUnset) {
  setenv("OMPI_MCA_btl_tcp_if_exclude", "docker0", 1);
  setenv("OMPI_MCA_oob_tcp_if_exclude", "docker0", 1);
  apply_launch_defaults();
  EXPECT_EQ(env("OMPI_MCA_btl_tcp_if_include"), std::nullopt);
  EXPECT_EQ(env("OMPI_MCA_oob_tcp_if_include"), std::nullopt);
}

TEST_F(LaunchDefaults, NeverOverrideTheUsersValue) {
  setenv("OMPI_MCA_btl_tcp_if_include", "eth0", 1);
  setenv("OMPI_MCA_orte_enable_recovery", "0", 1);
  apply_launch_defaults();
  EXPECT_EQ(env("OMPI_MCA_btl_tcp_if_include"), "eth0");
  EXPECT_EQ(env("OMPI_MCA_orte_enable_recovery"), "0");
}

}  // namespace
