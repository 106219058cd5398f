import sys

from optcmp.cli import console_main

sys.exit(console_main())
