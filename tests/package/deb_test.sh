#!/usr/bin/env bash
# Makes the .deb with CPack, unpacks it into a temporary root and runs what it installed:
# pipesim --version, and (where the module was built) the Python import.
#   deb_test.sh BUILD_DIR PYTHON_OR_EMPTY
set -euo pipefail
build=$1 python=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" > "$tmp/cpack.log" || { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/out/pipesim_*.deb)
dpkg-deb --info "$deb" | grep -E "Package: pipesim|Version: " 
dpkg-deb -x "$deb" "$tmp/root"
"$tmp/root/usr/bin/pipesim" --version | grep -q "^pipesim "
"$tmp/root/usr/bin/pipesim" schedule --schedule zb-v -p 2 -m 4 --format pytorch > /dev/null
test -f "$tmp/root/usr/lib/cmake/pipesim/pipesimConfig.cmake"
if [ -n "$python" ]; then
  PYTHONPATH="$tmp/root/usr/lib/python3/dist-packages" "$python" -c \
    "import pipesim; assert pipesim.__file__.startswith('$tmp/root'); print('import pipesim', pipesim.__version__, 'from the .deb')"
fi
echo "deb: ok ($(basename "$deb"))"
