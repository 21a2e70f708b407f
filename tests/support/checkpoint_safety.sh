# Sourced by the es and ppo end-to-end checks (check checkpoint-safety): what a run does with a
# file already at --checkpoint, the pairing of a resumed log with its checkpoint, and paths that
# name no regular file (a FIFO, a directory, a device) as --checkpoint, --output or --resume.
# Needs fail(), expect_status (expect_status.sh), /usr/bin/python3 with h5py, and two arrays: `short`,
# the command of a run of 2 steps (a row of the log each), and `longer`, the same run of 3 steps;
# both write a checkpoint after every step.
#   checkpoint_safety_checks
# shellcheck shell=bash disable=SC2154  # short and longer are the caller's

checkpoint_safety_checks() {
  sum() { sha256sum <"$1"; }
  refused() { expect_status 2 "$1" "${@:2}"; }
  is_checkpoint() {
    /usr/bin/python3 -c 'import sys, h5py; f = h5py.File(sys.argv[1], "r"); assert f.attrs["format"] in ("fiber-checkpoint", b"fiber-checkpoint")' "$1" 2>/dev/null
  }

  # A file that is not a checkpoint, at --checkpoint of a new run: refused and left as it was;
  # --overwrite replaces it.
  echo "someone's notes" >notes.txt
  : >empty.h5
  /usr/bin/python3 -c 'import h5py; h5py.File("data.h5", "w")["x"] = [1.0, 2.0]'
  local file before
  for file in notes.txt empty.h5 data.h5; do
    before=$(sum $file)
    refused "--checkpoint $file exists and is not a checkpoint; refused, not to destroy it: .*--overwrite" \
      "${short[@]}" --output new.h5 --checkpoint $file
    [[ $(sum $file) == "$before" ]] || fail "$file was changed"
    [[ ! -e new.h5 ]] || fail "a run refused for its --checkpoint created its log"
  done
  "${short[@]}" --output new.h5 --checkpoint notes.txt --overwrite >/dev/null ||
    fail "--overwrite did not replace notes.txt"
  is_checkpoint notes.txt || fail "--overwrite: notes.txt is not a checkpoint"

  # Another run's checkpoint at --checkpoint of a new run: refused, unless --overwrite.
  "${short[@]}" --output a.h5 >/dev/null
  local a_log a_checkpoint
  a_log=$(sum a.h5)
  a_checkpoint=$(sum a.ckpt.h5)
  refused "--checkpoint a.ckpt.h5 holds the checkpoint of another run; refused, not to destroy it: .*--resume auto.*--overwrite" \
    "${short[@]}" --output b.h5 --checkpoint a.ckpt.h5
  [[ $(sum a.ckpt.h5) == "$a_checkpoint" ]] || fail "another run's checkpoint was replaced"
  [[ ! -e b.h5 ]] || fail "a run refused for its --checkpoint created its log"
  # Replaced with --overwrite, it is b's: a's log does not continue from it.
  "${short[@]}" --output b.h5 --checkpoint a.ckpt.h5 --overwrite >/dev/null ||
    fail "--overwrite did not replace another run's checkpoint"
  refused "checkpoint a.ckpt.h5 is another run's than the log a.h5" \
    "${longer[@]}" --output a.h5 --resume auto
  [[ $(sum a.h5) == "$a_log" ]] || fail "a refused resume changed its log"
  # Nor from any other run's checkpoint given to --resume.
  "${short[@]}" --output c.h5 >/dev/null
  refused "checkpoint c.ckpt.h5 is another run's than the log a.h5" \
    "${longer[@]}" --output a.h5 --checkpoint a2.ckpt.h5 --resume c.ckpt.h5
  [[ $(sum a.h5) == "$a_log" ]] || fail "a refused resume changed its log"
  [[ ! -e a2.ckpt.h5 ]] || fail "a refused resume wrote a checkpoint"

  # A run resumed from a copy of its own checkpoint replaces its --checkpoint (the same run's),
  # but not a file of anything else.
  "${short[@]}" --output d.h5 >/dev/null
  cp d.ckpt.h5 d-copy.ckpt.h5
  echo "other notes" >notes2.txt
  before=$(sum notes2.txt)
  refused "--checkpoint notes2.txt exists and is not a checkpoint" \
    "${longer[@]}" --output d.h5 --resume d-copy.ckpt.h5 --checkpoint notes2.txt
  [[ $(sum notes2.txt) == "$before" ]] || fail "notes2.txt was changed"
  "${longer[@]}" --output d.h5 --resume d-copy.ckpt.h5 | grep -q "resumed from d-copy.ckpt.h5" ||
    fail "a run did not resume from a copy of its own checkpoint"
  cmp -s d.ckpt.h5 d-copy.ckpt.h5 && fail "the resumed run did not write its checkpoint"

  # Paths that name no regular file: one line and exit 2 at once, whatever the flags, and the
  # file left as it is (a run must never wait in open() on a FIFO, nor replace it).
  mkfifo pipe
  mkdir folder
  ln -s /dev/null null.h5
  at_once() {  # at_once PATTERN COMMAND...: refused within a minute; a run stuck on pipe is let go
    local status=0
    (refused "$1" timeout -k 5 60 "${@:2}") || status=$?
    timeout 5 sh -c ': <>pipe' 2>/dev/null || true
    [[ $status -eq 0 ]] || fail "not refused at once: ${*:2}"
  }
  local kind
  for file in pipe folder null.h5; do
    case $file in
    pipe) kind="a FIFO" ;;
    folder) kind="a directory" ;;
    null.h5) kind="a character device" ;;
    esac
    at_once "--checkpoint $file is $kind, not a regular file" "${short[@]}" --output new2.h5 \
      --checkpoint $file
    at_once "--checkpoint $file is $kind, not a regular file" "${short[@]}" --output new2.h5 \
      --checkpoint $file --overwrite
    at_once "--checkpoint $file is $kind, not a regular file" "${short[@]}" --output new2.h5 \
      --checkpoint $file --resume auto
    at_once "--output $file is $kind, not a regular file" "${short[@]}" --output $file \
      --checkpoint new2.ckpt.h5
    at_once "--output $file is $kind, not a regular file" "${short[@]}" --output $file \
      --checkpoint new2.ckpt.h5 --overwrite
    at_once "--resume $file is $kind, not a regular file" "${short[@]}" --output d.h5 \
      --checkpoint new2.ckpt.h5 --resume $file
    [[ ! -e new2.h5 && ! -e new2.ckpt.h5 ]] || fail "a run refused for $file created a file"
  done
  [[ -p pipe ]] || fail "the FIFO was replaced"
  [[ -d folder ]] || fail "the directory was replaced"
  [[ -L null.h5 ]] || fail "the link to /dev/null was replaced"
}
