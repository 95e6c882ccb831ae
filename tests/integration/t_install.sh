#!/usr/bin/env bash
# make install into a temporary prefix: a program builds against it with
# pkg-config (both header paths), every tool and library reports the one
# version, the .pc files name the install's own prefix (also under
# DESTDIR), the systemd unit verifies, and make uninstall removes it all.
. "$(dirname "$0")/lib.sh"
version=$(cat "$ROOT/VERSION")
mk() { make -s --no-print-directory -C "$ROOT" BUILD="$BUILD" "$@" > "$T/make.log" 2>&1 || fail "make $*: $(tail -5 "$T/make.log")"; }

P=$T/prefix
mk install PREFIX="$P" SYSCONFDIR="$T/etc"
export PKG_CONFIG_PATH=$P/lib/pkgconfig
[ "$(pkg-config --modversion lds)" = "$version" ] || fail "lds.pc says $(pkg-config --modversion lds), VERSION says $version"
[ "$(pkg-config --modversion mw)" = "$version" ] || fail "mw.pc says $(pkg-config --modversion mw), VERSION says $version"
pkg-config --libs mw | grep -q -- "-Wl,-rpath,$P/lib" || fail "mw.pc gives no rpath: $(pkg-config --libs mw)"
for inc in '<lds.h>' '<lds/lds.h>'; do
	printf '#include %s\n#include <stdio.h>\nint main(void) { printf("%%s\\n", lds_strerror(0)); return 0; }\n' "$inc" > "$T/p.c"
	# shellcheck disable=SC2046
	cc -o "$T/p" "$T/p.c" $(pkg-config --cflags --libs lds) 2> "$T/cc.log" ||
		fail "cc with pkg-config lds and #include $inc: $(cat "$T/cc.log")"
	# As a gateway's exec runs it: no LD_LIBRARY_PATH (ldsd-exec passes
	# no LD_* variable), so the library must be found through the rpath
	# that pkg-config gives.
	env -i PATH=/usr/bin:/bin "$T/p" > /dev/null || fail "the program built against the install does not run without LD_LIBRARY_PATH"
	ldd "$T/p" | grep -q "$P/lib/liblds.so.1" || fail "not linked against the installed liblds: $(ldd "$T/p")"
done
for prog in "$P"/sbin/* "$P"/bin/*; do
	out=$("$prog" --version 2>&1) || fail "${prog##*/} --version exited $?: $out"
	echo "$out" | grep -q "$version" || fail "${prog##*/} --version says '$out', not $version"
done
grep -q "^ExecStart=$P/sbin/ldsd .*-c $T/etc/lds/ldsd.conf" "$P/lib/systemd/system/ldsd.service" ||
	fail "the installed unit does not name this install's ldsd and config: $(grep ExecStart "$P/lib/systemd/system/ldsd.service")"
if command -v systemd-analyze > /dev/null; then
	MANPATH=$P/share/man systemd-analyze verify "$P/lib/systemd/system/ldsd.service" > "$T/verify.log" 2>&1 ||
		fail "systemd-analyze verify: $(cat "$T/verify.log")"
	verified="systemd-analyze verify passed"
else
	verified="no systemd-analyze here"
fi
grep -q "$P/libexec/lds/mw_matmul" "$P/share/doc/lds/conf/job-example.conf" || fail "job-example.conf does not name the installed example"
[ -x "$P/libexec/lds/mw_matmul" ] || fail "the example program job-example.conf names is not installed"
"$P/bin/mw_lanprobe" -h | grep -q '^usage: mpirun' || fail "mw_lanprobe -h does not print its usage"
grep -q "define MW_VERSION \"$version\"" "$P/include/lds/mw.h" || fail "mw.h's MW_VERSION is not $version"
mk uninstall PREFIX="$P" SYSCONFDIR="$T/etc"
left=$(find "$P" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"

# Packagers: DESTDIR with PREFIX=/usr.
mk install DESTDIR="$T/dest" PREFIX=/usr
grep -qx 'prefix=/usr' "$T/dest/usr/lib/pkgconfig/lds.pc" || fail "lds.pc under DESTDIR: $(head -3 "$T/dest/usr/lib/pkgconfig/lds.pc")"
grep -q "^ExecStart=/usr/sbin/ldsd " "$T/dest/usr/lib/systemd/system/ldsd.service" || fail "unit under DESTDIR names the wrong ldsd"
echo "measured: installed, built with pkg-config (<lds.h> and <lds/lds.h>), version $version everywhere, $verified, uninstalled clean, DESTDIR install names /usr"
