"""What treelens shows: the answers as tables (for the terminal and for HTML), the
pictures drawn to files, and the self-contained HTML report (:func:`treelens.report`).

Every module here calls the public computations and displays and formats what they
return; the command line (:mod:`treelens._cli`) sits on top and only parses
arguments."""
