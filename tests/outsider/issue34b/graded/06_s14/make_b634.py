import sys
sys.path.insert(0, "/work/wt/grader33d/tests/outsider/issue34b")
import nbformat
import grade_sample as G
e = {x["id"]: x for x in G.ENTRIES}["B6.3.4"]
print(e["code"])
nbformat.write(G.filled("06"), "/tmp/g33d/b634/all_right.ipynb")
nbformat.write(G.filled("06", e), "/tmp/g33d/b634/B6_3_4.ipynb")
