# Sourced by the end-to-end checks (tests/es, tests/ppo): how a run's HDF5 logs are stored.
#   expect_filters compressed|uncompressed FILE...
# compressed: every /log column has shuffle, gzip and Fletcher32 (a run that ended cleanly, or
# was stopped); uncompressed: Fletcher32 only (--no-compress-logs, or a run still writing). Both:
# chunked and extendible. Reads with h5py (/usr/bin/python3). Needs fail().
expect_filters() {
  local want="$1"
  shift
  /usr/bin/python3 - "$want" "$@" <<'PY' || fail "logs not $want: $*"
import sys, h5py
want, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    with h5py.File(path, "r") as f:
        for name, d in f["log"].items():
            seen = (d.compression, d.shuffle, d.fletcher32, d.maxshape)
            expected = ("gzip", True, True, (None,)) if want == "compressed" else \
                (None, False, True, (None,))
            assert seen == expected and d.chunks, (path, name, seen)
PY
}
