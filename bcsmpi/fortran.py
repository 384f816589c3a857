#!/usr/bin/env python3
"""Writes BCS-MPI's Fortran layer from mpi.h (docs/bcsmpi.md, Fortran):

  fortran.c  the Fortran bindings of every C function mpi.h declares —
             mpi_send_ and friends, gfortran's names (lower case, one
             trailing underscore) — each argument by reference, handles
             as MPI_Fint (the C handles' values: MPICH's ABI makes them
             ints), ierror last, MPI_BOTTOM, MPI_IN_PLACE and
             MPI_STATUS(ES)_IGNORE recognised by their common blocks'
             addresses; the few calls that take strings or callbacks
             are written by hand in fortran_str.c or report
             MPI_ERR_UNSUPPORTED_OPERATION;
  mpif.h     every integer constant of mpi.h as a PARAMETER (handles
             as 32-bit integers), MPI_STATUS_SIZE and the status
             indexes, the kinds, and the special addresses in COMMON
             blocks, in lines valid in fixed and free form alike.

Usage: fortran.py mpi.h OUT_C OUT_MPIF
"""
import re
import sys

FN = re.compile(r"BCSMPI_FN\(\s*([A-Za-z_][A-Za-z_0-9 ]*?)\s*,\s*"
                r"([A-Za-z_0-9]+)\s*,\s*\((.*?)\)\)\s*\n", re.S)
HANDLES = {"MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Request", "MPI_Op",
           "MPI_Errhandler", "MPI_Info", "MPI_Win", "MPI_Message"}
WIDE = {"MPI_Aint", "MPI_Count", "MPI_Offset"}
# written by hand (fortran_str.c): strings in or out
BY_HAND = {"Get_processor_name", "Error_string", "Get_library_version",
           "Comm_set_name", "Comm_get_name", "Type_set_name",
           "Type_get_name", "Init", "Comm_get_attr", "Attr_get",
           "Comm_set_attr", "Attr_put", "Op_create", "Pcontrol",
           "Info_set", "Info_get", "Info_get_valuelen", "Info_delete",
           "Info_get_nthkey", "Add_error_string", "Comm_create_keyval",
           "Type_create_keyval", "Keyval_create",
           "Comm_create_errhandler", "Grequest_start"}
# predefined attributes: Fortran's keyvals are C's + 1 (MPICH's values;
# fortran_str.c maps them back)
PREDEFINED_ATTRS = {"MPI_TAG_UB", "MPI_HOST", "MPI_IO",
                    "MPI_WTIME_IS_GLOBAL", "MPI_UNIVERSE_SIZE",
                    "MPI_LASTUSEDCODE", "MPI_APPNUM"}
# not for Fortran at all
SKIP = {"Wtime", "Wtick", "Aint_add", "Aint_diff",
        "Status_c2f", "Status_f2c", "File_c2f", "File_f2c",
        "Init_thread"}


def split_params(p):
    out, depth, cur = [], 0, ""
    for ch in p:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [" ".join(x.split()) for x in out]


def param_name(p):
    m = re.search(r"\(\s*\*\s*([A-Za-z_0-9]+)\s*\)", p)
    if m:
        return m.group(1)
    m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\s*(\[[^\]]*\])*\s*$", p)
    return m.group(1)


def binding(ret, name, params):
    """The C of one binding, or None (then it reports unsupported)."""
    ps = split_params(params)
    if ps == ["void"]:
        ps = []
    if ret != "int":
        return None
    args, call, pre = [], [], []
    for p in ps:
        n = param_name(p)
        base = p.replace("const ", "")
        is_ptr = "*" in p or "[" in p
        if "(" in p or "_function" in p or "_fn" in p or "..." in p:
            return None  # a callback: by hand, or not for Fortran
        if "char" in base:
            return None  # a string: by hand, or not for Fortran
        if "MPI_Status" in base:
            args.append("MPI_Fint *%s" % n)
            arr = "[" in p or "statuses" in n
            ign = "MPI_STATUSES_IGNORE" if arr else "MPI_STATUS_IGNORE"
            fign = "f_statuses_ignore" if arr else "f_status_ignore"
            call.append("(%s == %s ? %s : (MPI_Status *)%s)" %
                        (n, fign, ign, n))
        elif "void" in base:
            args.append("void *%s" % n)
            call.append("f_buffer(%s)" % n)
        elif "MPI_File" in base:
            return None
        elif is_ptr:
            t = base.split()[0]
            ctype = t if t in WIDE else ("MPI_Fint" if t in HANDLES or
                                         t == "int" else None)
            if ctype is None:
                return None
            args.append("%s *%s" % (ctype, n))
            if "[][3]" in p.replace(" ", ""):
                call.append("(int (*)[3])%s" % n)
            else:
                cast = "(%s *)" % t if t in HANDLES else ""
                call.append("%s%s" % (cast, n))
        else:
            t = base.split()[0]
            if t in WIDE:
                args.append("%s *%s" % (t, n))
                call.append("*%s" % n)
            elif t in HANDLES or t == "int":
                args.append("MPI_Fint *%s" % n)
                call.append("(%s)*%s" % (t, n))
            else:
                return None
    args.append("MPI_Fint *ierror")
    lines = ["BCSMPI_F void mpi_%s_(%s)" % (name.lower(), ", ".join(args)),
             "{"]
    lines += pre
    lines.append("\t*ierror = MPI_%s(%s);" % (name, ", ".join(call)))
    lines.append("}")
    return "\n".join(lines)


HEAD = """/* Generated by bcsmpi/fortran.py from mpi.h: do not edit. */
#include <stddef.h>

#include "fortran.h"

/* a binding that reports unsupported takes its arguments unread */
#pragma GCC diagnostic ignored "-Wunused-parameter"

"""


def write_c(decls, out):
    body, unsupported = [], []
    for ret, name, params in decls:
        if name in SKIP or name in BY_HAND:
            continue
        b = binding(ret, name, params)
        if b is None:
            unsupported.append(name)
            continue
        body.append(b)
    params = dict((d[1], d[2]) for d in decls)
    for name in unsupported:
        # every argument a reference; ierror is the last before any
        # hidden string lengths
        ps = [p for p in split_params(params[name]) if p != "void"]
        args = ["void *a%d" % i for i in range(len(ps))]
        body.append("BCSMPI_F void mpi_%s_(%s)\n{\n\t*ierror = bcs_fortran_"
                    "unsupported(\"MPI_%s\");\n}" %
                    (name.lower(), ", ".join(args + ["MPI_Fint *ierror"]),
                     name))
    with open(out, "w") as f:
        f.write(HEAD + "\n\n".join(body) + "\n")


DEFINE = re.compile(r"^#define (MPI_[A-Z0-9_]+)\s+(.*?)\s*$", re.M)
VALUE = re.compile(r"^\(?\s*(?:\(\s*[A-Za-z_]+\s*\))?\s*(-?(?:0x[0-9a-fA-F]+|"
                   r"\d+))\s*\)?$")


def write_mpif(text, out):
    lines = ["! mpif.h: BCS-MPI's Fortran constants, generated by",
             "! bcsmpi/fortran.py from mpi.h (MPICH's values): do not edit.",
             "      INTEGER MPI_STATUS_SIZE",
             "      PARAMETER (MPI_STATUS_SIZE=5)",
             "      INTEGER MPI_SOURCE, MPI_TAG, MPI_ERROR",
             "      PARAMETER (MPI_SOURCE=3, MPI_TAG=4, MPI_ERROR=5)",
             "      INTEGER MPI_ADDRESS_KIND, MPI_OFFSET_KIND",
             "      PARAMETER (MPI_ADDRESS_KIND=8, MPI_OFFSET_KIND=8)",
             "      INTEGER MPI_COUNT_KIND, MPI_INTEGER_KIND",
             "      PARAMETER (MPI_COUNT_KIND=8, MPI_INTEGER_KIND=4)"]
    seen = {"MPI_SOURCE", "MPI_TAG", "MPI_ERROR", "MPI_STATUS_SIZE"}
    for name, val in DEFINE.findall(text):
        m = VALUE.match(val)
        if not m or name in seen:
            continue
        v = int(m.group(1), 0)
        if name in PREDEFINED_ATTRS:
            v += 1  # Fortran's keyval of it, as MPICH numbers them
        if v >= 2 ** 31:
            v -= 2 ** 32  # the handle's 32 bits, as an INTEGER
        if not -2 ** 31 <= v < 2 ** 31:
            continue
        seen.add(name)
        lines.append("      INTEGER %s" % name)
        lines.append("      PARAMETER (%s=%d)" % (name, v))
    lines += [
        "      INTEGER MPI_BOTTOM, MPI_IN_PLACE",
        "      INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)",
        "      INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)",
        "      INTEGER MPI_ERRCODES_IGNORE(1)",
        "      COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE",
        "      COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE",
        "      SAVE /MPIPRIV1/, /MPIPRIV2/",
        "      DOUBLE PRECISION MPI_WTIME, MPI_WTICK",
        "      EXTERNAL MPI_WTIME, MPI_WTICK",
        "      EXTERNAL MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN",
        "      EXTERNAL MPI_COMM_DUP_FN, MPI_NULL_COPY_FN",
        "      EXTERNAL MPI_NULL_DELETE_FN, MPI_DUP_FN",
        "      EXTERNAL MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN",
        "      EXTERNAL MPI_TYPE_DUP_FN",
        "      INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF",
        "      EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF",
    ]
    for l in lines:
        assert len(l) <= 72, l
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    header, out_c, out_mpif = sys.argv[1:4]
    with open(header) as f:
        raw = f.read()
    text = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    text = re.sub(r"#define BCSMPI_FN\(ret, name, params\)", "", text)
    decls = [(ret, name, params) for ret, name, params in FN.findall(text)]
    write_c(decls, out_c)
    write_mpif(text, out_mpif)


if __name__ == "__main__":
    main()
