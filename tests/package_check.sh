#!/usr/bin/env bash
# ctest's package checks (tests/CMakeLists.txt registers both):
#   package_check.sh install BUILD SOURCE APP_ID GUI  the install rules of this build, into a
#       temporary prefix: the file list, the installed program finding its data, the validators
#   package_check.sh deb DEB SOURCE APP_ID VERSION    a package scripts/package built: its file
#       list, its version (the project's and the Debian revision: VERSION, where DEB is the one
#       this build names), its Depends (no CUDA library, the Qt and BLAS it links) and lintian's
#       errors;
#       $GPULAB_PACKAGE_DEB, when set, names the package instead of DEB (scripts/test sets it
#       when it packages the build the tests ran on)
# Exits 77 (ctest: skipped), saying why, where what it needs is missing.
set -euo pipefail
mode=$1
fail=0
skip() { printf 'SKIPPED: %s\n' "$*"; exit 77; }
bad() { printf 'FAIL: %s\n' "$*"; fail=1; }

# The files every install holds, relative to the prefix; $1 is the list to look in.
check_list() {
  local list=$1 source=$2 app_id=$3 gui=$4
  local want=(bin/gpulab-cli share/gpulab/cluster/gpulab.slurm share/gpulab/cluster/hostfile
    share/man/man1/gpulab-cli.1.gz share/doc/gpulab/copyright share/doc/gpulab/changelog.Debian.gz share/doc/gpulab/README.md)
  for f in "$source"/docs/*.md; do want+=("share/doc/gpulab/docs/${f#"$source"/docs/}"); done
  for f in "$source"/resources/labs/*.md "$source"/resources/demos/*.json; do
    want+=("share/gpulab/${f#"$source"/resources/}")
  done
  for f in "$source"/resources/reference-runs/*/run.json; do
    want+=("share/gpulab/${f#"$source"/resources/}")
  done
  for page in "$source"/docs/man/gpulab-cli*.1; do want+=("share/man/man1/$(basename "$page").gz"); done
  if [[ $gui == ON ]]; then
    want+=(bin/gpulab share/man/man1/gpulab.1.gz "share/applications/$app_id.desktop"
      "share/metainfo/$app_id.metainfo.xml" "share/icons/hicolor/scalable/apps/$app_id.svg")
    for size in 16 32 48 64 128 256; do want+=("share/icons/hicolor/${size}x$size/apps/$app_id.png"); done
  fi
  for f in "${want[@]}"; do grep -qxF "$f" <<<"$list" || bad "$f is not installed"; done
  grep -Eq '(^|/)lib(cuda|cublas|nccl|nvidia)' <<<"$list" && bad "a CUDA library is installed"
  printf 'checked %d files of %d installed\n' "${#want[@]}" "$(wc -l <<<"$list")"
}

# The licence, said alike everywhere: the copyright file (DEP-5) gives gpulab's files ("Files: *")
# GPL-3+ with its text's paragraph, names QCustomPlot's, and gives every licence it uses a
# paragraph; AppStream's project_license is the same licence in SPDX's words; LICENSE in the source
# is the GPL's version 3. $1 is the prefix (share/ under it), $3 ON where the window is installed.
check_licence() {
  local root=$1 source=$2 gui=$3 copyright=$1/share/doc/gpulab/copyright licence name
  local project="(no window installed)"
  [[ -f $copyright ]] || { bad "no copyright file at ${copyright#"$root"/}"; return; }
  head -n 1 "$copyright" |
    grep -qxF 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    bad "the copyright file is not machine-readable (no DEP-5 Format line)"
  licence="$(awk '/^Files: \*$/ {f = 1; next} f && /^License: / {print $2; exit} /^$/ {f = 0}' "$copyright")"
  [[ $licence == GPL-3+ ]] || bad "the copyright file's Files: * has License '$licence', not GPL-3+"
  grep -A3 'QCustomPlot' "$copyright" | grep -q 'GPL' || bad "the copyright file does not name QCustomPlot's licence"
  # A stand-alone paragraph (its first line "License: NAME", its text below) for every licence used.
  local standalone
  standalone="$(awk 'prev == "" && /^License: / {print $2} {prev = $0}' "$copyright" | sort -u)"
  while read -r name; do
    grep -qxF "$name" <<<"$standalone" || bad "the copyright file uses $name with no paragraph holding its text"
  done < <(awk '/^License: / {print $2}' "$copyright" | sort -u)
  grep -qi 'unspecified' "$copyright" && bad "the copyright file still says a licence is unspecified"
  if [[ $gui == ON ]]; then
    project="$(sed -n 's|.*<project_license>\(.*\)</project_license>.*|\1|p' "$root"/share/metainfo/*.metainfo.xml)"
    [[ $project == GPL-3.0-or-later ]] ||
      bad "AppStream's project_license is '$project', not GPL-3.0-or-later (the copyright file's GPL-3+)"
  fi
  { grep -q 'GNU GENERAL PUBLIC LICENSE' "$source/LICENSE" && grep -q 'Version 3, 29 June 2007' "$source/LICENSE"; } 2>/dev/null ||
    bad "LICENSE in the source is not the GPL's version 3"
  printf 'licence: the copyright file says %s, AppStream %s\n' "$licence" "${project:-(no window installed)}"
}

validate() {
  local root=$1 app_id=$2
  if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$root/share/applications/$app_id.desktop" || bad "the desktop entry is not valid"
  else
    printf 'desktop-file-validate not found (desktop-file-utils): the menu entry is not checked\n'
  fi
  if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net --pedantic "$root/share/metainfo/$app_id.metainfo.xml" ||
      bad "the AppStream metadata is not valid"
  else
    printf 'appstreamcli not found (appstream): the AppStream metadata is not checked\n'
  fi
}

case $mode in
  install)
    build=$2 source=$3 app_id=$4 gui=$5
    prefix="$(mktemp -d)"
    trap 'rm -rf "$prefix"' EXIT
    cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
    list="$(cd "$prefix" && find . -type f | sed 's|^\./||' | sort)"
    check_list "$list" "$source" "$app_id" "$gui"
    [[ -x $prefix/share/gpulab/cluster/gpulab.slurm ]] || bad "gpulab.slurm is not executable"
    # The installed program runs from its prefix, and finds the labs and its data folder.
    "$prefix/bin/gpulab-cli" lab list | grep -q cnn-on-gpu || bad "the installed gpulab-cli lists no labs"
    # A site's shared MNIST is read from /var/lib/gpulab/mnist ($GPULAB_SYSTEM_DATA here), a folder
    # no package owns, and never from share/gpulab/mnist beside the program, which the package
    # owns (purging it would leave 55 MB and a warning): with four empty files in each, training
    # refuses the shared copy's, naming that folder.
    mkdir -p "$prefix/share/gpulab/mnist" "$prefix/var/lib/gpulab/mnist" "$prefix/home"
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
      : >"$prefix/share/gpulab/mnist/$f"
      : >"$prefix/var/lib/gpulab/mnist/$f"
    done
    said="$(env -u GPULAB_DATA -u XDG_DATA_HOME GPULAB_SYSTEM_DATA="$prefix/var/lib/gpulab/mnist" \
      HOME="$prefix/home" "$prefix/bin/gpulab-cli" train --steps 1 2>&1 || true)"
    grep -qF "$prefix/var/lib/gpulab/mnist" <<<"$said" ||
      bad "the installed gpulab-cli does not read the shared MNIST in \$GPULAB_SYSTEM_DATA: it said: $said"
    said="$(env -u GPULAB_DATA -u XDG_DATA_HOME -u GPULAB_SYSTEM_DATA HOME="$prefix/home" \
      "$prefix/bin/gpulab-cli" train --steps 1 2>&1 || true)"
    grep -qF "$prefix/share/gpulab/mnist" <<<"$said" &&
      bad "the installed gpulab-cli reads MNIST from share/gpulab/mnist, a folder the package owns: $said"
    check_licence "$prefix" "$source" "$gui"
    [[ $gui == ON ]] && validate "$prefix" "$app_id"
    ;;
  deb)
    deb=${GPULAB_PACKAGE_DEB:-$2} source=$3 app_id=$4 version=${5:-}
    [[ -f $deb ]] || skip "no package at $deb: scripts/package builds it"
    command -v dpkg-deb >/dev/null || skip "dpkg-deb not found (dpkg)"
    # Relative to /usr, where a Debian package installs.
    list="$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./usr/||' | sort)"
    gui=OFF
    grep -qxF bin/gpulab <<<"$list" && gui=ON
    check_list "$list" "$source" "$app_id" "$gui"
    got_version="$(dpkg-deb -f "$deb" Version)"
    [[ $got_version =~ ^[0-9][0-9.]*-[0-9][A-Za-z0-9.+~]*$ ]] ||
      bad "Version $got_version is not <version>-<Debian revision>"
    [[ -n ${GPULAB_PACKAGE_DEB:-} || -z $version || $got_version == "$version" ]] ||
      bad "Version is $got_version, not this build's $version"
    [[ $(basename "$deb") == "gpulab_${got_version}_amd64.deb" ]] ||
      bad "the file $(basename "$deb") is not named for its version $got_version"
    depends="$(dpkg-deb -f "$deb" Depends)"
    printf 'Depends: %s\n' "$depends"
    for lib in libc6 libstdc++6 libopenblas0 zlib1g libgomp1; do
      grep -q "\\b$lib\\b" <<<"$depends" || bad "Depends does not name $lib"
    done
    [[ $gui == OFF ]] || grep -q 'libqt6widgets6' <<<"$depends" || bad "Depends does not name libqt6widgets6"
    grep -qi 'cuda\|cublas\|nvidia' <<<"$depends" && bad "Depends names a CUDA package: $depends"
    root="$(mktemp -d)"
    trap 'rm -rf "$root"' EXIT
    dpkg-deb -x "$deb" "$root"
    check_licence "$root/usr" "$source" "$gui"
    [[ $gui == ON ]] && validate "$root/usr" "$app_id"
    if command -v lintian >/dev/null; then
      out="$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v '^running with root privileges' || true)"
      [[ -z $out ]] || printf '%s\n' "$out"
      grep -q '^E: ' <<<"$out" && bad "lintian reports errors"
    else
      printf 'lintian not found: the package is not checked against Debian policy\n'
    fi
    ;;
  *) echo "usage: package_check.sh install|deb ..."; exit 2 ;;
esac
((fail == 0)) && printf 'package check (%s): passed\n' "$mode"
exit "$fail"
