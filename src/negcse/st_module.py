"""The import path that ``modules.json`` of prompt-pooled model folders saved by earlier versions
names (``negcse.st_module.PooledEncoder``): the module is :mod:`negcse.encoders.st_module`."""

from negcse.encoders.st_module import PooledEncoder

__all__ = ["PooledEncoder"]
