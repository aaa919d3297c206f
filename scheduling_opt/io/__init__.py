"""The file layer: instance files (format ``scheduling-opt/v1``), its JSON Schema, traces.

Only this package, the problem packages' ``io`` modules, the registry, the
CLI, the benchmark and the simulator's workload readers read or write files;
an algorithm never sees JSON.
"""
