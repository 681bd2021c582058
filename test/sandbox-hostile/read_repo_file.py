# Attack: read a file outside the data directory (the service's own package.json, next to its .env).
# Contained by: only the venv under the repository is bound into the sandbox, not the repository.
# Expect: forbidden
return open('__REPO_DIR__/package.json').read()
