"""The data layer: the task table (`tasks`), reading task files, GLUE folders and corpora (`files`), the input
transforms and collators (`transforms`), metrics (`metrics`) and prediction files (`submissions`)."""
