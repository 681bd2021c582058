# Attack: reach os.system without importing os, through object.__subclasses__(), the classic way out
# of text-filtered Python "sandboxes".
# Contained by: the filter on the code's text is not the boundary; seccomp kills the process when
# system() clones.
# Expect: forbidden
wrap_close = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]
return wrap_close.__init__.__globals__['system']('id')
