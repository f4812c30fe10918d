"""stub"""
def report(results):
    return 0
