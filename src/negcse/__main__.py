import sys

from negcse.cli import main
from negcse.runtime.worker import client_exit_code

if __name__ == "__main__":
    code = client_exit_code(sys.argv[1:])  # through $NEGCSE_WORKER's server, if one answers
    raise SystemExit(main() if code is None else code)
