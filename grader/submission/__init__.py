"""Finding, importing and running a submission: the loader, the banned-API guard and the runners."""
