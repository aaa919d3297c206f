"""The simulator's command-line pieces: ``scheduling-opt simulate`` and ``policies``, options, outputs.

- :mod:`.simulate`: the ``simulate`` command;
- :mod:`.policies`: the ``policies`` command (every policy, its parameters);
- :mod:`.options`: the library's checks under the options' names, the
  output folder, a trace read up front;
- :mod:`.output`: the table, the reading, the report and the files;
- :mod:`.plots`: the plots (matplotlib, optional);
- :mod:`.progress`: the progress bar;
- :mod:`.busy`: the rule that sizes the default run's cluster.
"""
