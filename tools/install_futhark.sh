#!/usr/bin/env bash
# Install the real Futhark compiler (Debian's next release packages 0.25.x) on this
# Debian bookworm machine without touching the system's C library (docs/futhark.md,
# "Installing the compiler"):
#   1. bookworm packages: patchelf, ocl-icd-opencl-dev, opencl-c-headers (futhark opencl
#      needs the OpenCL headers and libOpenCL.so to build the programs it compiles);
#   2. a *private* apt configuration (own sources list, state, cache) whose archive is
#      taken from the machine's own apt sources with the suite changed to $SUITE;
#   3. `apt-get download` futhark and the libraries its binary needs, `dpkg -x` them
#      into the private prefix $PREFIX (git-ignored);
#   4. `patchelf` the interpreter and rpath of a *copy* of the binary, so `futhark bench`
#      and `futhark autotune` (which re-run the compiler by their own path) work;
#   5. link it as $VENV/bin/futhark.
# Idempotent: a second run only checks `futhark --version` and returns.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${FUTHARK_PREFIX:-$ROOT/.futhark}"
VENV="${VENV:-$ROOT/.venv}"
SUITE="${FUTHARK_SUITE:-trixie}"
BIN="$PREFIX/bin/futhark"
LIBS="futhark libc6 libcmark-gfm0.29.0.gfm.13 libcmark-gfm-extensions0.29.0.gfm.13 libgmp10 libffi8 libnuma1 libtinfo6 zlib1g"

link() {
    mkdir -p "$VENV/bin"
    ln -sf "$BIN" "$VENV/bin/futhark"
}

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1 && [ -e /usr/include/CL/cl.h ]; then
    link
    exit 0
fi

SUDO=$( [ "$(id -u)" = 0 ] || echo sudo )
need=()
command -v patchelf >/dev/null 2>&1 || need+=(patchelf)
[ -e /usr/include/CL/cl.h ] || need+=(opencl-c-headers)
dpkg -s ocl-icd-opencl-dev >/dev/null 2>&1 || need+=(ocl-icd-opencl-dev)
if [ ${#need[@]} -gt 0 ]; then
    echo "install_futhark: installing Debian's ${need[*]}"
    # Other sessions may hold the dpkg lock: wait for it rather than fail.
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null
fi

# The archive of this machine's own Debian suite (deb822 .sources or one-line lists).
read -r URI KEYRING < <(python3 - <<'EOF'
import glob, re
codename = open("/etc/os-release").read()
codename = re.search(r'^VERSION_CODENAME=(\S+)', codename, re.M).group(1)
found = []
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in open(path).read().split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            if ":" in line and not line.lstrip().startswith("#"):
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
        if "deb" in fields.get("types", "").split() and codename in fields.get("suites", "").split():
            found.append((fields["uris"].split()[0], fields.get("signed-by", "")))
for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        m = re.match(r'^deb\s+(?:\[(.*?)\]\s+)?(\S+)\s+(\S+)\s', line)
        if m and m.group(3) == codename:
            key = re.search(r'signed-by=(\S+)', m.group(1) or "")
            found.append((m.group(2), key.group(1) if key else ""))
if not found:
    raise SystemExit(f"install_futhark: no apt source for suite {codename} in /etc/apt")
uri, key = found[0]
print(uri, key or "/usr/share/keyrings/debian-archive-keyring.gpg")
EOF
)

APT="$PREFIX/apt"
mkdir -p "$APT/state/lists/partial" "$APT/cache/archives/partial" "$APT/debs"
: > "$APT/status"
echo "deb [signed-by=$KEYRING] $URI $SUITE main" > "$APT/sources.list"
OPTS=(-o "Dir::Etc::SourceList=$APT/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State=$APT/state" -o "Dir::State::status=$APT/status" -o "Dir::Cache=$APT/cache"
      -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
      -o APT::Sandbox::User=root)
echo "install_futhark: downloading futhark and its libraries from $SUITE (private apt state in $APT)"
apt-get "${OPTS[@]}" -qq update
rm -f "$APT/debs/"*.deb
(cd "$APT/debs" && apt-get "${OPTS[@]}" -qq download $LIBS)
for deb in "$APT/debs/"*.deb; do dpkg -x "$deb" "$PREFIX/root"; done

LIBDIR="$PREFIX/root/usr/lib/x86_64-linux-gnu"
mkdir -p "$PREFIX/bin"
cp "$PREFIX/root/usr/bin/futhark" "$BIN.tmp"
patchelf --set-interpreter "$LIBDIR/ld-linux-x86-64.so.2" --set-rpath "$LIBDIR" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
rm -rf "$APT/debs" "$APT/cache"
link
echo "install_futhark: $("$BIN" --version | head -1 | sed 's/\.$//') installed in $BIN"  # futhark says "Futhark 0.25.27."
