# Sourced by the device-call scripts (run from the repository root on the device machine): the carried
# wheels (.whl/) installed into /tmp/site, the paths the tests and `muh` need, and cap().
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MUH_CACHE_DIR=${MUH_CACHE_DIR:-/tmp/muh-cache} MAX_JOBS=16
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export PATH=/tmp/site/bin:$PATH
cap() {  # seconds a step may take: its own cap ($1), cut to end 10 s before the script's deadline $END
  local c=$1 left=$((END - SECONDS - 10)); [ "$left" -lt "$c" ] && c=$left; echo $c
}
