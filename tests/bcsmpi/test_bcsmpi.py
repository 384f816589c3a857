#!/usr/bin/env python3
"""BCS-MPI as a user meets it: mpi.h, libbcsmpi, bcsmpicc, bcsmpi.pc.

Usage: test_bcsmpi.py TEST        (meson sets the BCSMPI_* environment)

  wrapper  BUILD/bcsmpi/bcsmpicc compiles, links and runs hello.c in one
           step and in separate -c / link steps with the user's flags mixed
           in (-O2 -Wall -DFOO=1, -o in the middle); pmpi.c's own MPI_*
           take the place of the library's while PMPI_* reach it;
  show     -show prints exactly the command bcsmpicc would run, with link
           flags only when the compiler links; arguments reach the
           compiler unchanged and in order; -h, no arguments, $BCSMPI_CC;
  header   mpi.h compiles warning-free (-Wall -Wextra -Wpedantic -Werror)
           as C89, C11 and C++98/11/17, with clang too when present;
  abi      abi_probe.c built with MPICH's mpicc.mpich and with bcsmpicc
           prints the same types, MPI_Status layout and constants; every
           prototype of mpi.h is MPICH's, and every MPI_ has its PMPI_,
           both defined by libbcsmpi;
  install  meson install --destdir: mpi.h in includedir/bcsmpi, the
           library (and as libmpich.so.12, libmpi.so.12 in
           libdir/bcsmpi), bcsmpi.pc resolving with pkg-config, the installed
           bcsmpicc's -show naming the installed paths; a program built
           from the installed files runs;
  synth    ../shared/mpi-synth's synth.c and calib.c compile (-c).

Exit: 0 pass, 1 fail, 77 skipped (a tool or ../shared/mpi-synth absent).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("BCSMPI_BUILD_ROOT", "")
SOURCE = os.environ.get("BCSMPI_SOURCE_ROOT", "")
WRAPPER = os.path.join(BUILD, "bcsmpi", "bcsmpicc")
# With -Db_sanitize the library is instrumented, so programs that link it
# must link the sanitizer runtimes too.
SAN = os.environ.get("BCSMPI_SANITIZE", "none")
SAN_FLAGS = [] if SAN in ("", "none") else ["-fsanitize=" + SAN]
STRICT = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def run(argv, env=None, cwd=None, ok=True):
    """Run argv; with ok, fail the test on a non-zero exit."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(argv, env=e, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    if ok and p.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (
            " ".join(shlex.quote(a) for a in argv), p.returncode,
            p.stdout, p.stderr))
    return p


def src(name):
    return os.path.join(HERE, name)


# ---------------------------------------------------------------- wrapper

def test_wrapper(tmp):
    hello = src("hello.c")
    # one step
    exe1 = os.path.join(tmp, "hello1")
    run([WRAPPER, "-O2"] + STRICT + ["-DFOO=1", hello, "-o", exe1]
        + SAN_FLAGS)
    out1 = run([exe1]).stdout
    # -c, then link; flags before and after the files, -o in the middle
    obj = os.path.join(tmp, "hello.o")
    exe2 = os.path.join(tmp, "hello2")
    run([WRAPPER, "-O2", "-Wall", "-c", "-DFOO=1", hello, "-o", obj,
         "-Wextra", "-Werror"] + SAN_FLAGS)
    check(os.path.exists(obj), "-c made no object")
    run([WRAPPER, "-O2", obj, "-o", exe2, "-Wall"] + SAN_FLAGS)
    out2 = run([exe2]).stdout
    for out in (out1, out2):
        check("version 3.1\n" in out, "no 'version 3.1' in %r" % out)
        check(re.search(r"^library Storm BCS-MPI %s$" % re.escape(
            os.environ["BCSMPI_VERSION"]), out, re.M),
            "library version line wrong: %r" % out)
        check(re.search(r"^error MPI_ERR_TRUNCATE: \S", out, re.M),
              "error string line wrong: %r" % out)
        check("wtime ok" in out, "wtime line missing: %r" % out)
    # the rpath finds the build tree's library, not another one
    ldd = run(["ldd", exe2]).stdout
    check(os.path.join(BUILD, "bcsmpi", "libbcsmpi.so.0") in ldd,
          "hello2 does not load the build tree's libbcsmpi:\n" + ldd)
    # the profiling interface
    exe3 = os.path.join(tmp, "pmpi")
    run([WRAPPER] + STRICT + [src("pmpi.c"), "-o", exe3] + SAN_FLAGS)
    print(run([exe3]).stdout, end="")
    print(out2, end="")


# ------------------------------------------------------------------- show

def test_show(tmp):
    inc = "-I" + os.path.join(SOURCE, "bcsmpi")
    libdir = os.path.join(BUILD, "bcsmpi")
    link = ["-L" + libdir, "-Wl,-rpath," + libdir, "-lbcsmpi"]
    env = {"CC": "gcc"}
    env.pop("BCSMPI_CC", None)
    os.environ.pop("BCSMPI_CC", None)

    def show(*args):
        return shlex.split(run([WRAPPER] + list(args), env=env).stdout)

    got = show("-show", "-O2", "a.c", "-o", "a", "-DFOO=1")
    check(got == ["gcc", inc, "-O2", "a.c", "-o", "a", "-DFOO=1"] + link,
          "link -show: %s" % got)
    # -show anywhere; no link flags when the compiler does not link
    for stop in ("-c", "-E", "-S", "-M", "-MM"):
        got = show("-O2", stop, "a.c", "-show")
        check(got == ["gcc", inc, "-O2", stop, "a.c"],
              "%s -show: %s" % (stop, got))
    # -MD / -MMD write dependencies and still link
    got = show("-show", "-MMD", "a.c")
    check(got == ["gcc", inc, "-MMD", "a.c"] + link, "-MMD: %s" % got)
    # alone, -show prints the base command
    check(show("-show") == ["gcc", inc] + link, "bare -show")
    # words with spaces and quotes survive -show (shell-quoted) ...
    got = show("-show", "-c", "my file.c", "-DMSG=\"it's\"", "-o", "x y.o")
    check(got == ["gcc", inc, "-c", "my file.c", "-DMSG=\"it's\"", "-o",
                  "x y.o"], "quoting: %s" % got)
    # ... and the real run: $BCSMPI_CC wins over $CC, each argument reaches
    # the compiler as one argument, in order
    p = run([WRAPPER, "-c", "my file.c", "", "-DA=b c"],
            env={"BCSMPI_CC": "printf %s\\n", "CC": "false"})
    check(p.stdout.split("\n")[:-1] == [inc, "-c", "my file.c", "",
                                        "-DA=b c"],
          "argv reaching the compiler: %r" % p.stdout)
    # help and misuse
    p = run([WRAPPER, "--help"])
    check(p.stdout.startswith("Usage: bcsmpicc") and "-show" in p.stdout,
          "--help: %r" % p.stdout)
    check(run([WRAPPER, "-h"]).stdout == p.stdout, "-h differs from --help")
    p = run([WRAPPER], ok=False)
    check(p.returncode == 2 and "Usage:" in p.stderr,
          "no arguments: exit %d, %r" % (p.returncode, p.stderr))
    print("show: link/no-link, quoting, argument order, help: ok")


# ----------------------------------------------------------------- header

HEADER_USE = r"""
#include <mpi.h>
static int f(void)
{
	MPI_Status st;
	MPI_Request r[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
	int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) =
		MPI_Send;
	double (*wt)(void) = PMPI_Wtime;
	st.MPI_SOURCE = MPI_ANY_SOURCE;
	return st.MPI_SOURCE + (send != 0) + (wt != 0) + (int)sizeof r +
		(MPI_Comm_c2f(MPI_COMM_WORLD) == 0) +
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
}
int main(void) { return f() == 12345; }
"""


def test_header(tmp):
    c = os.path.join(tmp, "use.c")
    with open(c, "w") as fh:
        fh.write(HEADER_USE)
    o = os.path.join(tmp, "use.o")
    compilers = [("cc", ["c89", "c11"], "c")]
    if shutil.which("c++"):
        compilers.append(("c++", ["c++98", "c++11", "c++17"], "c++"))
    if shutil.which("clang"):
        compilers.append(("clang", ["c11"], "c"))
    if shutil.which("clang++"):
        compilers.append(("clang++", ["c++11"], "c++"))
    for cc, stds, lang in compilers:
        for std in stds:
            run([WRAPPER, "-std=" + std] + STRICT + ["-x", lang, "-c", c,
                                                      "-o", o],
                env={"BCSMPI_CC": cc})
            print("header: %s -std=%s clean" % (cc, std))


# -------------------------------------------------------------------- abi

def aux_prototypes(cflags, tmp, tag):
    """gcc -aux-info: every MPI/PMPI prototype the header declares,
    normalised (parameter names dropped, arrays as pointers)."""
    c = os.path.join(tmp, "inc-%s.c" % tag)
    aux = os.path.join(tmp, "%s.aux" % tag)
    with open(c, "w") as fh:
        fh.write("#include <mpi.h>\n")
    run(["gcc"] + cflags + ["-aux-info", aux, "-c", c, "-o", os.devnull])
    protos = {}
    with open(aux) as fh:
        for line in fh:
            line = re.sub(r"^/\*.*?\*/ ", "", line.strip())
            m = re.match(r"extern (.*?) ?\b(P?MPI_\w+) \((.*)\);$", line)
            if m:
                norm = re.sub(r"\s+", " ", "%s (%s)" % (m[1], m[3]))
                protos[m[2]] = norm.replace(" ,", ",").replace(" )", ")")
    return protos


def test_abi(tmp):
    mpicc = shutil.which("mpicc.mpich")
    if not mpicc:
        raise Skip("mpicc.mpich not found (apt-get install libmpich-dev "
                   "mpich; scripts/deps installs it)")
    probe = src("abi_probe.c")
    exe_m = os.path.join(tmp, "probe-mpich")
    exe_b = os.path.join(tmp, "probe-bcsmpi")
    run([mpicc, probe, "-o", exe_m])
    run([WRAPPER] + STRICT + [probe, "-o", exe_b] + SAN_FLAGS)
    want = run([exe_m]).stdout.splitlines()
    got = run([exe_b]).stdout.splitlines()
    check(len(want) > 300, "MPICH's probe printed only %d lines" % len(want))
    diff = [(w, g) for w, g in zip(want, got) if w != g]
    check(len(want) == len(got) and not diff,
          "values differ from MPICH's (MPICH, ours): %s" % diff[:20])
    print("abi: %d types, layouts and constants equal MPICH's" % len(want))

    if not shutil.which("gcc"):
        print("abi: prototypes not compared (no gcc for -aux-info)")
        return
    show = shlex.split(run([mpicc, "-show"]).stdout)
    mflags = [a for a in show if a.startswith("-I")]
    theirs = aux_prototypes(mflags, tmp, "mpich")
    ours = aux_prototypes(["-I" + os.path.join(SOURCE, "bcsmpi")], tmp,
                          "ours")
    funcs = [n for n in ours if n.startswith("MPI_")
             and not n.endswith("_function")]
    bad = ["%s: ours %s, MPICH %s" % (n, p, theirs.get(n))
           for n, p in sorted(ours.items()) if theirs.get(n) != p]
    check(not bad, "prototypes differ from MPICH's:\n" + "\n".join(bad))
    missing = [n for n in funcs if "P" + n not in ours]
    check(not missing, "no PMPI_ twin: %s" % missing)
    # MPI-3.1's C binding has 389 functions besides the handle conversion
    # macros (counted from the standard's annex; Open MPI 4.1 agrees)
    check(len(funcs) == 389, "mpi.h declares %d MPI_ functions, MPI-3.1 "
          "has 389" % len(funcs))
    # and libbcsmpi defines every one, MPI_ and PMPI_ (those it does not
    # implement fail with MPI_ERR_UNSUPPORTED_OPERATION): a program that
    # references any of them links, an MPICH-built binary loads
    syms = set(run(["nm", "-D", "--defined-only",
                    os.path.join(BUILD, "bcsmpi", "libbcsmpi.so.0")])
               .stdout.split())
    undefined = [n for n in funcs for m in (n, "P" + n) if m not in syms]
    check(not undefined, "declared in mpi.h, not defined by libbcsmpi: %s"
          % undefined)
    print("abi: %d functions, each with PMPI_, prototypes equal MPICH's, "
          "every one defined by libbcsmpi" % len(funcs))


# ---------------------------------------------------------------- install

def test_install(tmp):
    meson = shutil.which("meson")
    if not meson or not shutil.which("pkg-config"):
        raise Skip("meson or pkg-config not found")
    dest = os.path.join(tmp, "dest")
    run([meson, "install", "-C", BUILD, "--no-rebuild", "--quiet",
         "--destdir", dest])
    inc = os.environ["BCSMPI_INCDIR"]
    lib = os.environ["BCSMPI_LIBDIR"]
    bindir = os.environ["BCSMPI_BINDIR"]
    prefix = os.environ["BCSMPI_PREFIX"]

    def d(path):
        return dest + path

    check(os.path.isfile(d(os.path.join(inc, "mpi.h"))),
          "no mpi.h in %s" % inc)
    check(not os.path.exists(d(os.path.join(os.path.dirname(inc),
                                            "mpi.h"))),
          "mpi.h installed into the shared include directory")
    so = d(os.path.join(lib, "libbcsmpi.so.0"))
    check(os.path.isfile(so), "no libbcsmpi.so.0 in %s" % lib)
    soname = run(["readelf", "-d", so]).stdout
    check("[libbcsmpi.so.0]" in soname, "soname: %s" % soname)
    # MPICH's sonames, in a directory of their own (not lib itself)
    for name in ("libmpich.so.12", "libmpi.so.12", "libmpichfort.so.12",
                 "libmpifort.so.12"):
        link = d(os.path.join(lib, "bcsmpi", name))
        check(os.path.islink(link) and
              os.readlink(link) == "../libbcsmpi.so.0" and
              os.path.samefile(link, so),
              "%s: want a link to ../libbcsmpi.so.0" % link)
        check(not os.path.lexists(d(os.path.join(lib, name))),
              "%s installed into %s itself" % (name, lib))
    wrapper = d(os.path.join(bindir, "bcsmpicc"))
    check(os.access(wrapper, os.X_OK), "bcsmpicc not installed executable")

    # the installed wrapper names the installed paths
    got = shlex.split(run([wrapper, "-show", "x.c"],
                          env={"CC": "cc"}).stdout)
    check(got == ["cc", "-I" + inc, "x.c", "-L" + lib, "-Wl,-rpath," + lib,
                  "-lbcsmpi"], "installed -show: %s" % got)

    # the Fortran layer: mpif.h always, mpi.mod and bcsmpifort (its
    # -show naming the installed paths) when gfortran built the module
    check(os.path.isfile(d(os.path.join(inc, "mpif.h"))),
          "no mpif.h in %s" % inc)
    fwrapper = d(os.path.join(bindir, "bcsmpifort"))
    check(os.access(fwrapper, os.X_OK), "bcsmpifort not installed "
          "executable")
    got = shlex.split(run([fwrapper, "-show", "x.f90"],
                          env={"FC": "gfortran"}).stdout)
    check(got == ["gfortran", "-fallow-argument-mismatch", "-I" + inc,
                  "x.f90", "-L" + lib, "-Wl,-rpath," + lib, "-lbcsmpi"],
          "installed bcsmpifort -show: %s" % got)
    if shutil.which("gfortran"):
        check(os.path.isfile(d(os.path.join(inc, "mpi.mod"))),
              "no mpi.mod in %s" % inc)

    # bcsmpi.pc resolves
    pcdir = d(os.path.join(lib, "pkgconfig"))
    env = {"PKG_CONFIG_PATH": pcdir, "PKG_CONFIG_LIBDIR": pcdir}
    flags = run(["pkg-config", "--cflags", "--libs", "bcsmpi"],
                env=env).stdout.split()
    check("-I" + inc in flags and "-lbcsmpi" in flags
          and "-L" + lib in flags, "pkg-config: %s" % flags)
    # and builds a program from the installed files (prefix moved into
    # the destdir), which runs on the installed library
    flags = run(["pkg-config", "--define-variable=prefix=" + d(prefix),
                 "--cflags", "--libs", "bcsmpi"], env=env).stdout.split()
    exe = os.path.join(tmp, "hello-installed")
    run(["cc", "-DFOO=1", src("hello.c"), "-o", exe] + flags + SAN_FLAGS)
    out = run([exe], env={"LD_LIBRARY_PATH": d(lib)}).stdout
    check("version 3.1" in out, "installed hello: %r" % out)
    print("install: %s, %s, bcsmpi.pc, bcsmpicc, bcsmpifort, mpif.h in "
          "place; "
          "pkg-config %s" % (inc, lib, " ".join(flags)))


# ------------------------------------------------------------------ synth

def test_synth(tmp):
    where = os.environ.get("BCSMPI_SYNTH_DIR") or os.path.join(
        SOURCE, "..", "shared", "mpi-synth")
    if not os.path.isfile(os.path.join(where, "synth.c")):
        raise Skip("%s/synth.c not found (set BCSMPI_SYNTH_DIR)" % where)
    for name in ("synth", "calib"):
        o = os.path.join(tmp, name + ".o")
        run([WRAPPER, "-O2", "-Wall", "-Wextra", "-Werror", "-c",
             os.path.join(where, name + ".c"), "-o", o])
        print("synth: %s.c compiles" % name)


TESTS = {
    "wrapper": test_wrapper,
    "show": test_show,
    "header": test_header,
    "abi": test_abi,
    "install": test_install,
    "synth": test_synth,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in TESTS or not BUILD:
        print(__doc__, file=sys.stderr)
        return 2
    name = sys.argv[1]
    # meson points LD_LIBRARY_PATH at the build tree's library; the
    # programs built here must find theirs by rpath or an explicit path.
    os.environ.pop("LD_LIBRARY_PATH", None)
    tmp = tempfile.mkdtemp(prefix="storm-bcsmpi-%s-" % name)
    try:
        TESTS[name](tmp)
    except Skip as e:
        shutil.rmtree(tmp, ignore_errors=True)
        print("SKIP %s: %s" % (name, e))
        return 77
    except AssertionError as e:
        print("FAIL %s: %s\n(work files kept in %s)" % (name, e, tmp),
              file=sys.stderr)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("PASS %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
