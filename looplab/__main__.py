"""`python -m looplab` runs the CLI."""

from looplab.cli.main import main

if __name__ == "__main__":
    main()
