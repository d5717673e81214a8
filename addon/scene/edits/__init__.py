"""Scene edits that keep every world matrix where it is: helper empties above sheared
objects (:mod:`.helpers`), the shear baked into meshes (:mod:`.bake`), and what both
share (:mod:`.editing`: checks before anything is touched, parenting saved and restored).
Everything is validated first; on an error nothing has changed."""
