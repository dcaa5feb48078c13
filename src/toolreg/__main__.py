from toolreg.cli import main

raise SystemExit(main())
