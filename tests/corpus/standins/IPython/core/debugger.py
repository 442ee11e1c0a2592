"""``set_trace`` without a debugger: the tests run no interactive session."""


def set_trace(*args, **kwargs):
    return None
