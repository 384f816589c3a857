#!/usr/bin/env python3
"""embed.py IN OUT NAME -- IN's bytes as a C array NAME (NUL-terminated)
and NAME_len, so the page is part of the program: no file to install or
find at run time, and no build step beyond this copy."""
import sys

src, out, name = sys.argv[1:4]
data = open(src, "rb").read()
with open(out, "w") as f:
    f.write("/* generated from %s by embed.py: do not edit */\n"
            "#include <stddef.h>\n" % src.rsplit("/", 1)[-1])
    f.write("const char %s[] = {\n" % name)
    for i in range(0, len(data), 16):
        f.write("".join("%d," % b for b in data[i:i + 16]) + "\n")
    f.write("0 };\nconst size_t %s_len = %d;\n" % (name, len(data)))
