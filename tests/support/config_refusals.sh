# Sourced by the es and ppo end-to-end checks: what both programs refuse in their configuration.
# Need expect_refused PATTERN ARGUMENTS... (exit 2 and one line matching PATTERN), defined by the
# caller for its program.

# TOML files: the file, line and column of the fault (an unknown key, a syntax error, an
# unterminated string, a section).
expect_toml_faults_located() {
  printf 'learning-rate = 0.1\nlearning_rat = 2\n' >bad.toml
  expect_refused "bad.toml:2:1: unknown option 'learning_rat'" --config bad.toml
  printf 'seed = 3\nlearning-rate = = 2\n' >syntax.toml
  expect_refused "syntax.toml:2:17: " --config syntax.toml
  printf 'seed = 3\n\nenv = "CartPole-v1\n' >unterminated.toml
  expect_refused "unterminated.toml:3:" --config unterminated.toml
  printf 'seed = 3\n[section]\nseed = 4\n' >section.toml
  expect_refused "section.toml:2:2: \[section\]: sections are not options" --config section.toml
}

# expect_non_finite_refused OPTION...: nan, inf and -inf refused for each, as a flag and in TOML.
expect_non_finite_refused() {
  local option value
  for option in "$@"; do
    for value in nan inf -inf; do
      expect_refused "--$option: must be a finite number" "--$option=$value"
      printf '%s = %s\n' "$option" "$value" >value.toml
      expect_refused "value.toml:1:1: --$option: must be a finite number" --config value.toml
    done
  done
}
