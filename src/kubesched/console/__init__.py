"""What kubesched shows on a terminal and how it reads command-line options, shared by the CLI's
commands and the labs: tables, a pod's attempts explained, comparison and burst reports, plugin
descriptions, the web UI served until interrupted, and option checks that name the option."""
