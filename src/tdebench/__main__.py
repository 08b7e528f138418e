"""`python -m tdebench` entry point."""

from tdebench.cli.app import main

if __name__ == "__main__":
    main()
