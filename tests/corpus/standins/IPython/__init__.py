"""IPython stand-in: pytorch/tutorials' nn_tutorial imports ``IPython.core.debugger.set_trace`` (and leaves
the call commented out)."""
