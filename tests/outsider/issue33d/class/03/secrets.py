import os
import sys

with open("/tmp/h33d/PWNED_secrets_" + str(os.getpid()), "w") as f:  # imported from the current folder: a marker
    f.write(repr(sys.argv))
raise ImportError("planted secrets imported from the current folder")
