DELETE FROM {schema}.breakers WHERE queue = %(queue)s AND task = %(task)s
