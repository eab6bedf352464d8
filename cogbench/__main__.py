from cogbench.cli import main

raise SystemExit(main())
