# fsarena built-in: filemicro_create (appends to one file until $count appends; filebench's defaults).
set $dir=/tmp
set $count=1024
set $iosize=1m
set $nthreads=1
set $sync=false

define file name=largefile,path=$dir,size=0,prealloc

define process name=filecreater,instances=1
{
  thread name=filecreaterthread,memsize=10m,instances=$nthreads
  {
    flowop appendfile name=append-file,filename=largefile,dsync=$sync,iosize=$iosize
    flowop finishoncount name=finish,value=$count
  }
}
