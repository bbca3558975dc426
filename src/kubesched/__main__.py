"""`python -m kubesched`: the `kubesched` command."""

import sys

from kubesched.cli.main import main

sys.exit(main())
