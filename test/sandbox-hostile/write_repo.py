# Attack: write into the service's repository (plant code the worker would load).
# Contained by: the repository is not in the sandbox; the path's parents are read-only.
# Expect: forbidden
with open('__REPO_DIR__/__REPO_FILE_NAME__', 'w') as f:
    f.write('written from the sandbox')
return 'written'
