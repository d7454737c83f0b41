import sys

from novabench.cli import main

sys.exit(main())
