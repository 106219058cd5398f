import sys

from optcmp.cli import main

sys.exit(main())
