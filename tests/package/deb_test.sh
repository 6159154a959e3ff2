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
# A CUDA build's package carries the plugin where the unpacked binary looks for it, and it loads
# there (its libraries resolve): --check-cuda ends with a GPU list or "no CUDA device", never
# "cannot load". A CPU build's says "not built".
version=$("$tmp/root/usr/bin/pipesim" --version)
if grep -q "^  cuda    plugin built, but missing" <<< "$version"; then echo "$version"; exit 1; fi
if grep -q "^  cuda    plugin $tmp/root/usr/lib/pipesim/libpipesim_cuda.so " <<< "$version"; then
  check=$("$tmp/root/usr/bin/pipesim" --check-cuda 2>&1) || true
  if grep -q "cannot load\|another pipesim" <<< "$check"; then echo "$check"; exit 1; fi
  echo "deb: the CUDA plugin loads from the package"
fi
"$tmp/root/usr/bin/pipesim" schedule --schedule zb-v -p 2 -m 4 --format pytorch > /dev/null
test -f "$tmp/root/usr/lib/cmake/pipesim/pipesimConfig.cmake"
if [ -n "$python" ]; then
  PYTHONPATH="$tmp/root/usr/lib/python3/dist-packages" "$python" -c \
    "import pipesim; assert pipesim.__file__.startswith('$tmp/root'); print('import pipesim', pipesim.__version__, 'from the .deb')"
fi
echo "deb: ok ($(basename "$deb"))"
