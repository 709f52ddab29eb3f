"""`python -m hat_cli ...`: the `hat` command, for child processes started with this Python
(the gateway's `--workers`)."""

from hat_cli.main import app

app(prog_name="hat")
