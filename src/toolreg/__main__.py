from toolreg.cli import run

run()
